// What a program's output says: its last non-empty line (what it said last, usually why it
// failed), or all of it without the newlines, spaces and carriage returns it ends with.
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

inline std::string without_line_end(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace hangpy
