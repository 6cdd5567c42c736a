// libFuzzer target: text a target gave, made safe for a terminal (base/printable.h), and the
// source reader's line splitting (report/source_reader.h) over a file of any bytes. Properties,
// not only crashes: what for_terminal returns is valid UTF-8 with no C0 control but the tab (and
// the line end when asked), no DEL, no C1 control and no raw invisible or direction-changing code
// point; json_for_terminal leaves no raw C1 either. The source reader reads the bytes as a .py file
// named by several spellings, which must give the same lines.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "base/printable.h"
#include "fuzz/memory_file.h"
#include "report/source_reader.h"

using namespace hangpy;

namespace {

// Traps unless `text` is valid UTF-8 free of the controls a terminal obeys.
void check_terminal_safe(std::string_view text, bool newlines) {
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if ((byte < 0x20 && byte != '\t' && !(newlines && byte == '\n')) || byte == 0x7f) __builtin_trap();
      ++i;
      continue;
    }
    size_t length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc2 ? 2 : 0;
    if (length == 0 || i + length > text.size()) __builtin_trap();
    for (size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) __builtin_trap();
    if (byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) __builtin_trap();  // C1
    uint32_t code = byte & (length == 2 ? 0x1f : length == 3 ? 0x0f : 0x07);
    for (size_t k = 1; k < length; ++k) code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3f);
    if (invisible_code_point(code)) __builtin_trap();  // U+202E and its kind, raw
    i += length;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_terminal_safe(for_terminal(text), false);
  check_terminal_safe(for_terminal(text, true), true);
  const std::string json = json_for_terminal(std::string(text));
  for (size_t i = 0; i + 1 < json.size(); ++i)
    if (static_cast<unsigned char>(json[i]) == 0xc2 && static_cast<unsigned char>(json[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(json[i + 1]) <= 0x9f)
      __builtin_trap();
  // The same bytes as a source file (a real .py file: the reader refuses /proc's views), named by
  // several spellings, which must be one file read once: every line it gives is bounded and safe.
  const std::string& directory = fuzz::scratch_directory();
  if (directory.empty()) return 0;
  const std::string path = directory + "/source.py";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) return 0;
  }
  report::FileSourceReader reader;
  const std::string name = std::filesystem::path(directory).filename().string();
  for (const std::string& spelling : {path, directory + "/./source.py", directory + "//source.py",
                                      directory + "/../" + name + "/source.py"}) {
    for (int number = 1; number <= 64; ++number) {
      const std::optional<std::string> line = reader.raw_line(spelling, number);
      if (!line) break;
      // An escaped byte takes 4 characters: a line is at most 4 times the cap.
      if (line->size() > 4 * report::FileSourceReader::kMaxLineBytes) __builtin_trap();
      check_terminal_safe(*line, false);
      // Every spelling names the same file: the same line.
      if (spelling != path && line != reader.raw_line(path, number)) __builtin_trap();
    }
  }
  return 0;
}
