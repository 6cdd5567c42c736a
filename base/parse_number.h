// Decimal numbers from text that came from a user or from a target's memory: never throws (the
// std::sto* family throws out_of_range on "99999999999", which would end coreanalyze or gdb).
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

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

}  // namespace hangpy
