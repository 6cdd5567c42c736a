#include "jobs/host_list.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "base/split.h"

namespace hangpy::jobs {
namespace {

// The items of `text` split at commas outside brackets.
Expected<std::vector<std::string>> split_items(const std::string& text) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0 || depth > 1)
      return make_error(ErrorKind::kInvalidInput, fmt::format("unbalanced brackets in host list '{}'", text));
    if ((c == ',' || c == ' ') && depth == 0) {
      if (!current.empty()) items.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (depth != 0) return make_error(ErrorKind::kInvalidInput, fmt::format("unclosed bracket in host list '{}'", text));
  if (!current.empty()) items.push_back(std::move(current));
  return items;
}

Expected<uint64_t> number(const std::string& text, const std::string& item) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    return make_error(ErrorKind::kInvalidInput, fmt::format("'{}' in host list item '{}' is not a number", text, item));
  return value;
}

// The names one item stands for: its first bracket group expanded, each rest expanded in turn.
Expected<void> expand_item(const std::string& item, std::vector<std::string>& out) {
  const size_t open = item.find('[');
  if (open == std::string::npos) {
    out.push_back(item);
    return {};
  }
  const size_t close = item.find(']', open);
  const std::string prefix = item.substr(0, open);
  const std::string rest = item.substr(close + 1);
  const std::string inside = item.substr(open + 1, close - open - 1);
  for (const std::string_view part : split_on(inside, ',')) {
    const std::string range(part);
    if (range.empty()) continue;
    const size_t dash = range.find('-');
    const std::string low_text = range.substr(0, dash);
    auto low = number(low_text, item);
    if (!low) return std::unexpected(low.error());
    uint64_t high = *low;
    if (dash != std::string::npos) {
      auto parsed = number(range.substr(dash + 1), item);
      if (!parsed) return std::unexpected(parsed.error());
      high = *parsed;
    }
    if (high < *low || high - *low >= kMaxHosts)
      return make_error(ErrorKind::kInvalidInput, fmt::format("the range '{}' in host list item '{}' is empty or too long", range, item));
    for (uint64_t value = *low; value <= high; ++value) {
      if (out.size() >= kMaxHosts)
        return make_error(ErrorKind::kInvalidInput, fmt::format("the host list names more than {} hosts", kMaxHosts));
      const std::string digits = fmt::format("{:0{}}", value, low_text.size());
      if (auto ok = expand_item(prefix + digits + rest, out); !ok) return ok;
    }
  }
  return {};
}

}  // namespace

Expected<std::vector<std::string>> expand_host_list(const std::string& list) {
  auto items = split_items(list);
  if (!items) return std::unexpected(items.error());
  std::vector<std::string> hosts;
  for (const std::string& item : *items) {
    if (auto ok = expand_item(item, hosts); !ok) return std::unexpected(ok.error());
  }
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (std::string& host : hosts)
    if (seen.insert(host).second) unique.push_back(std::move(host));
  return unique;
}

}  // namespace hangpy::jobs
