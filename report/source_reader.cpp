#include "report/source_reader.h"

#include <fstream>

namespace hangpy::report {
namespace {

constexpr size_t kMaxSourceBytes = 16 << 20;  // no source file worth showing is bigger

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return {};
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

const std::vector<std::string>* FileSourceReader::lines_of(const std::string& file) {
  auto cached = files_.find(file);
  if (cached != files_.end()) return cached->second ? &*cached->second : nullptr;
  std::optional<std::vector<std::string>> lines;
  // Pseudo-files such as "<string>" or "<frozen importlib._bootstrap>" have no source.
  if (!file.empty() && file.front() != '<') {
    std::ifstream stream(sysroot_ + file, std::ios::binary);
    if (stream) {
      lines.emplace();
      size_t total = 0;
      for (std::string text; std::getline(stream, text) && total < kMaxSourceBytes;) {
        total += text.size();
        lines->push_back(std::move(text));
      }
    }
  }
  auto& slot = files_.emplace(file, std::move(lines)).first->second;
  return slot ? &*slot : nullptr;
}

std::optional<std::string> FileSourceReader::raw_line(const std::string& file, int line_number) {
  const auto* lines = lines_of(file);
  if (!lines || line_number < 1 || static_cast<size_t>(line_number) > lines->size())
    return std::nullopt;
  std::string text = (*lines)[static_cast<size_t>(line_number) - 1];
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

std::optional<std::string> FileSourceReader::line(const std::string& file, int line_number) {
  auto text = raw_line(file, line_number);
  if (!text) return std::nullopt;
  return trim(*text);
}

}  // namespace hangpy::report
