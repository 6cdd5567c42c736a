// Text lowercased byte by byte in the C locale's ASCII sense: symbols, thread names and words
// matched without regard to case (never a user's locale: a core read anywhere reads the same).
#pragma once

#include <string>
#include <string_view>

namespace hangpy {

inline std::string ascii_lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace hangpy
