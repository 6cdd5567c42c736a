// A text cut at each separator, empty parts kept: "a::b" on ':' is "a", "", "b".
#pragma once

#include <string_view>
#include <vector>

namespace hangpy {

inline std::vector<std::string_view> split_on(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t at = 0;
  for (;;) {
    const size_t end = text.find(separator, at);
    parts.push_back(text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    if (end == std::string_view::npos) return parts;
    at = end + 1;
  }
}

}  // namespace hangpy
