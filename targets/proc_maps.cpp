#include "targets/proc_maps.h"

#include <elf.h>

#include <charconv>

namespace hangpy::targets {
namespace {

// The next field of `line` (up to a space), and `line` moved past it and the spaces after it.
std::string_view next_field(std::string_view& line) {
  const size_t end = std::min(line.find(' '), line.size());
  std::string_view field = line.substr(0, end);
  line.remove_prefix(end);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  return field;
}

bool parse_hex(std::string_view text, uint64_t& value) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return error == std::errc() && end == text.data() + text.size();
}

// "START-END" into [start, end); false when it does not parse or is empty.
bool parse_range(std::string_view range, uint64_t& start, uint64_t& end) {
  const size_t dash = range.find('-');
  return dash != std::string_view::npos && parse_hex(range.substr(0, dash), start) &&
         parse_hex(range.substr(dash + 1), end) && end > start;
}

std::optional<FileMapping> parse_line(std::string_view line) {
  FileMapping mapping;
  if (!parse_range(next_field(line), mapping.start, mapping.end)) return std::nullopt;
  next_field(line);  // permissions
  if (!parse_hex(next_field(line), mapping.file_offset)) return std::nullopt;
  next_field(line);  // device
  next_field(line);  // inode
  if (!line.starts_with('/')) return std::nullopt;  // anonymous or a pseudo-file like [heap]
  mapping.path = std::string(line);
  return mapping;
}

template <typename Parse>
void for_each_line(std::string_view text, const Parse& parse) {
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    parse(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
}

}  // namespace

std::vector<MappedRange> parse_proc_map_ranges(std::string_view text) {
  std::vector<MappedRange> ranges;
  for_each_line(text, [&ranges](std::string_view line) {
    MappedRange range;
    if (!parse_range(next_field(line), range.start, range.end)) return;
    const std::string_view permissions = next_field(line);
    if (permissions.size() < 3) return;
    if (permissions[0] == 'r') range.protection |= PF_R;
    if (permissions[1] == 'w') range.protection |= PF_W;
    if (permissions[2] == 'x') range.protection |= PF_X;
    ranges.push_back(range);
  });
  return ranges;
}

std::vector<FileMapping> parse_proc_maps(std::string_view text) {
  std::vector<FileMapping> mappings;
  for_each_line(text, [&mappings](std::string_view line) {
    if (auto mapping = parse_line(line)) mappings.push_back(std::move(*mapping));
  });
  return mappings;
}

}  // namespace hangpy::targets
