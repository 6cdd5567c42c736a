// The last non-empty line of a program's output: what it said last, usually why it failed.
#pragma once

#include <string>
#include <string_view>

namespace hangpy {

inline std::string last_line(std::string_view text) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  for (;;) {
    const size_t newline = text.rfind('\n');
    const std::string_view line = newline == std::string_view::npos ? text : text.substr(newline + 1);
    if (!line.empty() || newline == std::string_view::npos) return std::string(line);
    text = text.substr(0, newline);
  }
}

}  // namespace hangpy
