// Text a target gave (a path it opened, a file descriptor's link) as it may be printed to a
// terminal: control characters and DEL written as \xNN, never passed through, and at most
// `max_bytes` of it kept.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace hangpy {

inline std::string printable(std::string_view text, size_t max_bytes = 4096) {
  std::string out;
  for (const char c : text.substr(0, max_bytes)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '\\') out += fmt::format("\\x{:02x}", byte);
    else out += c;
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

}  // namespace hangpy
