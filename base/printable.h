// Text a target gave (a thread's name, a file name, a repr, a path it opened, a file descriptor's
// link) as it may be printed to a terminal: a core or a process is untrusted, and a raw
// "\x1b]0;...\x07" in a thread name would retitle the window, "\x1b[2J" clear it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace hangpy {

// Control characters, DEL and the backslash written as \xNN, at most `max_bytes` of it kept: for
// paths and links, whose backslashes are rare and would otherwise read as escapes.
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

// Code points that show nothing or change how the text around them shows: Unicode's format
// characters (category Cf: U+202E RIGHT-TO-LEFT OVERRIDE, the isolates U+2066-2069, zero-width
// U+200B-200F, U+FEFF...) and the line and paragraph separators. A file shown as
// "...admin_check.py" may be another name (the Trojan Source trick, CVE-2021-42574). From
// Unicode 15's Cf list, written out: the C library's wide-character classes are locale-bound.
inline bool invisible_code_point(uint32_t code) {
  struct Range {
    uint32_t first, last;
  };
  static constexpr Range kRanges[] = {
      {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},
      {0x070f, 0x070f},   {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x180e, 0x180e},
      {0x200b, 0x200f},   {0x2028, 0x202e},   {0x2060, 0x2064},   {0x2066, 0x206f},
      {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd},
      {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
      {0xe0020, 0xe007f}};
  for (const Range& range : kRanges)
    if (code >= range.first && code <= range.last) return true;
  return false;
}

// Any text a target gave, for a terminal: C0 controls (but the tab) and DEL as \xNN, C1 controls
// (U+0080-U+009F, which some terminals obey as escapes) as \u00NN, and bytes that are not UTF-8
// as \xNN, invisible and direction-changing code points (invisible_code_point) as \u{NNNN};
// valid UTF-8 otherwise unchanged, backslashes too (a repr's "'\\n'" stays as Python wrote it). `newlines`: keep line ends (a source line has none; a multi-line message may).
inline std::string for_terminal(std::string_view text, bool newlines = false) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if ((byte < 0x20 && byte != '\t' && !(newlines && byte == '\n')) || byte == 0x7f)
        out += fmt::format("\\x{:02x}", byte);
      else
        out += static_cast<char>(byte);
      ++i;
      continue;
    }
    // The length of a well-formed UTF-8 sequence starting here (RFC 3629: no overlongs, no
    // surrogates, nothing past U+10FFFF), 0 when it is not one.
    size_t length = 0;
    uint32_t code = 0;
    if (byte >= 0xc2 && byte <= 0xdf) length = 2, code = byte & 0x1f;
    else if (byte >= 0xe0 && byte <= 0xef) length = 3, code = byte & 0x0f;
    else if (byte >= 0xf0 && byte <= 0xf4) length = 4, code = byte & 0x07;
    bool valid = length != 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xc0) == 0x80;
      code = (code << 6) | (next & 0x3f);
    }
    if (valid && ((length == 3 && (code < 0x800 || (code >= 0xd800 && code <= 0xdfff))) ||
                  (length == 4 && (code < 0x10000 || code > 0x10ffff))))
      valid = false;
    if (!valid) {
      out += fmt::format("\\x{:02x}", byte);
      ++i;
    } else if (code >= 0x80 && code <= 0x9f) {
      out += fmt::format("\\u{:04x}", code);
      i += length;
    } else if (invisible_code_point(code)) {
      out += fmt::format("\\u{{{:04x}}}", code);
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

// A JSON text (ASCII controls already escaped by the writer) with the C1 controls and invisible
// code points (invisible_code_point) it may carry raw inside strings written as JSON escapes
// (\u00NN, \uNNNN, a surrogate pair past U+FFFF): valid JSON that reads the same, safe on a
// terminal.
inline std::string json_for_terminal(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    size_t length = byte >= 0xc2 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3
                    : byte >= 0xf0 && byte <= 0xf4 ? 4 : 0;
    if (length == 0 || i + length > text.size()) {
      out += static_cast<char>(byte);
      continue;
    }
    uint32_t code = byte & (length == 2 ? 0x1f : length == 3 ? 0x0f : 0x07);
    bool valid = true;
    for (size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xc0) == 0x80;
      code = (code << 6) | (next & 0x3f);
    }
    if (valid && ((code >= 0x80 && code <= 0x9f) || invisible_code_point(code))) {
      if (code > 0xffff) {
        const uint32_t high = 0xd800 + ((code - 0x10000) >> 10), low = 0xdc00 + ((code - 0x10000) & 0x3ff);
        out += fmt::format("\\u{:04x}\\u{:04x}", high, low);
      } else {
        out += fmt::format("\\u{:04x}", code);
      }
      i += length - 1;
    } else {
      out += static_cast<char>(byte);
    }
  }
  return out;
}

}  // namespace hangpy
