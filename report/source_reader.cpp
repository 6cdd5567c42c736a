#include "report/source_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

// At most kMaxFileBytes of the file.
std::string read_bounded(int fd) {
  std::string bytes;
  char chunk[64 * 1024];
  while (bytes.size() < FileSourceReader::kMaxFileBytes) {
    const ssize_t got = ::read(fd, chunk, std::min(sizeof chunk, FileSourceReader::kMaxFileBytes - bytes.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    bytes.append(chunk, static_cast<size_t>(got));
  }
  return bytes;
}

}  // namespace

FileSourceReader::FileSourceReader(SourcePolicy policy) : policy_(std::move(policy)) {
  const uid_t self = ::geteuid();
  more_privileged_ = self == 0 ? policy_.uid != 0u : (policy_.uid && *policy_.uid != self);
}

const FileSourceReader::SourceText* FileSourceReader::text_of(const std::string& file) {
  auto cached = files_.find(file);
  if (cached != files_.end()) return cached->second ? &*cached->second : nullptr;
  std::optional<SourceText> text;
  // Pseudo-files such as "<string>" or "<frozen importlib._bootstrap>" have no source.
  if (policy_.enabled && !file.empty() && file.front() != '<') {
    if (auto opened = open_target_file(policy_.root, file)) {
      if (!more_privileged_ || process_could_read(opened->status(), policy_.uid, policy_.gid)) {
        text.emplace();
        text->bytes = read_bounded(opened->fd());
        for (size_t start = 0; start < text->bytes.size();) {
          text->line_starts.push_back(start);
          const void* end = std::memchr(text->bytes.data() + start, '\n', text->bytes.size() - start);
          if (end == nullptr) break;
          start = static_cast<size_t>(static_cast<const char*>(end) - text->bytes.data()) + 1;
        }
      } else {
        withheld_.insert(file);
      }
    }
  }
  auto& slot = files_.emplace(file, std::move(text)).first->second;
  return slot ? &*slot : nullptr;
}

std::optional<std::string> FileSourceReader::raw_line(const std::string& file, int line_number) {
  const SourceText* source = text_of(file);
  if (!source || line_number < 1 || static_cast<size_t>(line_number) > source->line_starts.size())
    return std::nullopt;
  const size_t start = source->line_starts[static_cast<size_t>(line_number) - 1];
  size_t end = source->bytes.find('\n', start);
  if (end == std::string::npos) end = source->bytes.size();
  std::string text = source->bytes.substr(start, std::min(end - start, kMaxLineBytes));
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
