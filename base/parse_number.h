// Decimal numbers from text that came from a user or from a target's memory: never throws (the
// std::sto* family throws out_of_range on "99999999999", which would end coreanalyze or gdb).
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace hangpy {

// The whole of `text` as a decimal number of type T; nullopt when it is empty, has anything but
// digits (and a leading '-' for signed T), or does not fit T.
template <typename T>
std::optional<T> parse_decimal(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

// The process ids of options like `--pid 1,2 --pid 3`, appended to `pids` in order. Returns the
// first part that is no positive process id (then `pids` holds those before it).
inline std::optional<std::string> append_pid_lists(const std::vector<std::string>& given,
                                                   std::vector<int>& pids) {
  for (std::string_view list : given) {
    for (;;) {
      const size_t comma = list.find(',');
      const std::string_view part = list.substr(0, comma);
      auto pid = parse_decimal<int>(part);
      if (!pid || *pid <= 0) return std::string(part);
      pids.push_back(*pid);
      // A trailing comma ends the list ("1,2," is 1 and 2), as the shell-made lists users pass.
      if (comma == std::string_view::npos || comma + 1 == list.size()) break;
      list.remove_prefix(comma + 1);
    }
  }
  return std::nullopt;
}

}  // namespace hangpy
