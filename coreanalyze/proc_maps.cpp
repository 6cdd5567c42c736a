#include "coreanalyze/proc_maps.h"

#include <charconv>

namespace hangpy::coreanalyze {
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

std::optional<FileMapping> parse_line(std::string_view line) {
  const std::string_view range = next_field(line);
  const size_t dash = range.find('-');
  FileMapping mapping;
  if (dash == std::string_view::npos || !parse_hex(range.substr(0, dash), mapping.start) ||
      !parse_hex(range.substr(dash + 1), mapping.end) || mapping.end <= mapping.start) {
    return std::nullopt;
  }
  next_field(line);  // permissions
  if (!parse_hex(next_field(line), mapping.file_offset)) return std::nullopt;
  next_field(line);  // device
  next_field(line);  // inode
  if (!line.starts_with('/')) return std::nullopt;  // anonymous or a pseudo-file like [heap]
  mapping.path = std::string(line);
  return mapping;
}

}  // namespace

std::vector<FileMapping> parse_proc_maps(std::string_view text) {
  std::vector<FileMapping> mappings;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    if (auto mapping = parse_line(text.substr(0, end))) mappings.push_back(std::move(*mapping));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return mappings;
}

}  // namespace hangpy::coreanalyze
