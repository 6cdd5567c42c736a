#include "report/source_reader.h"

#include <unistd.h>

#include <cerrno>

#include "base/printable.h"
#include "base/target_named_file.h"

namespace hangpy::report {
namespace {

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return {};
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// The file's lines, from at most kMaxFileBytes of it, each cut at kMaxLineBytes.
std::vector<std::string> read_lines(int fd) {
  std::vector<std::string> lines(1);
  std::string chunk(64 * 1024, '\0');
  size_t total = 0;
  while (total < FileSourceReader::kMaxFileBytes) {
    const ssize_t got = ::read(fd, chunk.data(), std::min(chunk.size(), FileSourceReader::kMaxFileBytes - total));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    total += static_cast<size_t>(got);
    for (ssize_t i = 0; i < got; ++i) {
      const char c = chunk[static_cast<size_t>(i)];
      if (c == '\n') {
        lines.emplace_back();
      } else if (lines.back().size() < FileSourceReader::kMaxLineBytes) {
        lines.back().push_back(c);
      }
    }
  }
  if (lines.back().empty()) lines.pop_back();  // the text after the last line end, if any, is a line
  return lines;
}

}  // namespace

FileSourceReader::FileSourceReader(SourcePolicy policy) : policy_(std::move(policy)) {
  const uid_t self = ::geteuid();
  more_privileged_ = self == 0 ? policy_.uid != 0u : (policy_.uid && *policy_.uid != self);
}

const std::vector<std::string>* FileSourceReader::lines_of(const std::string& file) {
  auto cached = files_.find(file);
  if (cached != files_.end()) return cached->second ? &*cached->second : nullptr;
  std::optional<std::vector<std::string>> lines;
  // Pseudo-files such as "<string>" or "<frozen importlib._bootstrap>" have no source.
  if (policy_.enabled && !file.empty() && file.front() != '<') {
    if (auto opened = open_target_file(policy_.root, file)) {
      if (!more_privileged_ || process_could_read(opened->status(), policy_.uid, policy_.gid))
        lines = read_lines(opened->fd());
      else
        withheld_.insert(file);
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
  if (!text.empty() && text.back() == '\r') text.pop_back();  // a file written on Windows
  // A source file is whatever the path named: the lines shown reach the terminal escaped.
  return for_terminal(text);
}

std::optional<std::string> FileSourceReader::line(const std::string& file, int line_number) {
  auto text = raw_line(file, line_number);
  if (!text) return std::nullopt;
  return trim(*text);
}

}  // namespace hangpy::report
