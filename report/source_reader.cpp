#include "report/source_reader.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/printable.h"

namespace hangpy::report {
namespace {

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return {};
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// Whether the file's first line is a `#!` that runs python (read at most 256 bytes of it).
bool runs_python(int fd) {
  std::array<char, 256> head{};
  const ssize_t got = ::pread(fd, head.data(), head.size(), 0);
  if (got < 2 || head[0] != '#' || head[1] != '!') return false;
  std::string_view first(head.data(), static_cast<size_t>(got));
  first = first.substr(0, first.find('\n'));
  return first.find("python") != std::string_view::npos;
}

}  // namespace

bool named_like_python_source(const std::string& path) {
  const std::string_view name(path);
  for (std::string_view suffix : {".py", ".pyw", ".pyi", ".pyx", ".pxd", ".pxi"})
    if (name.size() > suffix.size() && name.ends_with(suffix) && name[name.size() - suffix.size() - 1] != '/')
      return true;
  return false;
}

FileSourceReader::FileSourceReader(SourcePolicy policy) : policy_(std::move(policy)) {
  const uid_t self = ::geteuid();
  more_privileged_ = self == 0 ? policy_.uid != 0u : (policy_.uid && *policy_.uid != self);
}

FileSourceReader::SourceText* FileSourceReader::text_of(const std::string& file) {
  auto named = names_.find(file);
  if (named == names_.end()) {
    if (names_.size() >= kMaxNames) return nullptr;  // a process naming files without end
    std::optional<FileKey> key;
    // Pseudo-files such as "<string>" or "<frozen importlib._bootstrap>" have no source.
    if (policy_.enabled && !file.empty() && file.front() != '<') {
      if (auto opened = open_target_file(policy_.root, file)) {
        const FileKey found{opened->status().st_dev, opened->status().st_ino};
        if (more_privileged_ && !process_could_read(opened->status(), policy_.uid, policy_.gid)) {
          withheld_.insert(file);
        } else if (texts_.contains(found)) {
          key = found;  // another name of a file already read
        } else if (named_like_python_source(file) || runs_python(opened->fd())) {
          key = found;
          SourceText& text = texts_[found];
          text.file.emplace(std::move(*opened));
          ++files_open_;
          // Too many files open at once: this one is read now, as far as the bounds allow.
          if (files_open_ > kMaxFilesOpen) read_to_line(found, text, SIZE_MAX);
        }
      }
    }
    named = names_.emplace(file, key).first;
  }
  if (!named->second) return nullptr;
  return &texts_.at(*named->second);
}

void FileSourceReader::read_to_line(const FileKey& key, SourceText& text, size_t line_number) {
  char chunk[64 * 1024];
  // Line N is whole once line N + 1 has begun (or the file ended).
  while (text.file && text.line_starts.size() <= line_number) {
    const size_t room = std::min({sizeof chunk, kMaxFileBytes - text.bytes.size(), kMaxBytesPerRun - bytes_read_});
    if (room == 0) {
      if (bytes_read_ >= kMaxBytesPerRun) over_budget_.insert(key);
      text.file.reset();
      --files_open_;
      break;
    }
    const ssize_t got = ::read(text.file->fd(), chunk, room);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {  // the end, or an error: what was read is all there is
      text.file.reset();
      --files_open_;
      break;
    }
    const size_t from = text.bytes.size();
    if (from == 0) text.line_starts.push_back(0);
    text.bytes.append(chunk, static_cast<size_t>(got));
    bytes_read_ += static_cast<size_t>(got);
    for (size_t at = from; at < text.bytes.size();) {
      const void* end = std::memchr(text.bytes.data() + at, '\n', text.bytes.size() - at);
      if (end == nullptr) break;
      at = static_cast<size_t>(static_cast<const char*>(end) - text.bytes.data()) + 1;
      text.line_starts.push_back(at);  // at the end: the next line begins in the next chunk
    }
  }
}

std::optional<std::string> FileSourceReader::raw_line(const std::string& file, int line_number) {
  SourceText* source = text_of(file);
  if (!source || line_number < 1) return std::nullopt;
  auto key = names_.at(file);
  read_to_line(*key, *source, static_cast<size_t>(line_number));
  const size_t index = static_cast<size_t>(line_number) - 1;
  if (index >= source->line_starts.size() || source->line_starts[index] >= source->bytes.size())
    return std::nullopt;
  const size_t start = source->line_starts[index];
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
