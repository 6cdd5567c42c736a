// Source lines for the text report, read from the analysing machine's files (under --sysroot, or a
// live process's own root). A file name comes from the target, so it is an untrusted path
// (base/target_named_file.h): opened inside the root only, a regular file of an ordinary file
// system only (never /proc/self/environ, which would show this program's own environment), and
// only when a Python process could have compiled it (a .py name and its kin, or a script whose
// first line runs python: not /etc/shadow, not a binary); and when this program is more privileged
// than the process was (root, or another user), a file the process could not read itself is not
// shown. Memory is bounded whatever the process names: a file is kept once however many names
// reach it (by device and inode), read only as far as the lines asked for, each file to
// kMaxFileBytes and all of them together to kMaxBytesPerRun.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/target_named_file.h"

namespace hangpy::report {

class SourceReader {
 public:
  virtual ~SourceReader() = default;
  // The line without its leading and trailing blanks, as tracebacks print it.
  virtual std::optional<std::string> line(const std::string& file, int line_number) = 0;
  // The line as the file has it (only the line end removed): columns count from its start.
  virtual std::optional<std::string> raw_line(const std::string& file, int line_number) = 0;
};

struct SourcePolicy {
  std::string root;      // "" (this machine's root), a --sysroot, or /proc/PID/root
  bool enabled = true;   // false: --no-source, no file is opened
  // The analysed process's owner (a core's NT_PRPSINFO, /proc/PID/status); unknown: it is taken
  // to read only what anyone may.
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
};

// Whether a Python process could have compiled a file of this name as source: .py and its kin
// (.pyw, .pyi, and Cython's .pyx, .pxd, .pxi, which tracebacks name too). Other files count only
// by their first line (a `#!` that runs python: an installed entry point such as /usr/bin/gunicorn).
bool named_like_python_source(const std::string& path);

class FileSourceReader : public SourceReader {
 public:
  static constexpr size_t kMaxFileBytes = 8 << 20;     // no source file worth showing is bigger
  static constexpr size_t kMaxBytesPerRun = 64 << 20;  // all files of one report together
  static constexpr size_t kMaxLineBytes = 4096;        // a longer line is cut
  static constexpr size_t kMaxFilesOpen = 64;          // files kept open to read further lines
  static constexpr size_t kMaxNames = 16384;           // distinct names looked up; more get no lines

  explicit FileSourceReader(SourcePolicy policy = {});
  FileSourceReader(FileSourceReader&&) = default;
  FileSourceReader& operator=(FileSourceReader&&) = default;
  std::optional<std::string> line(const std::string& file, int line_number) override;
  std::optional<std::string> raw_line(const std::string& file, int line_number) override;

  // The files whose lines were not shown because the process could not have read them (sorted).
  const std::set<std::string>& withheld() const { return withheld_; }
  // How many files had lines left out because the run's budget (kMaxBytesPerRun) was spent.
  size_t over_budget() const { return over_budget_.size(); }

 private:
  using FileKey = std::pair<dev_t, ino_t>;
  // A file's bytes read so far and where each line starts: read further when a later line is
  // asked for, while the file stays open.
  struct SourceText {
    std::string bytes;
    std::vector<size_t> line_starts;
    std::optional<OpenedTargetFile> file;  // open while more may be read
  };
  SourceText* text_of(const std::string& file);
  void read_to_line(const FileKey& key, SourceText& text, size_t line_number);
  SourcePolicy policy_;
  bool more_privileged_ = false;  // than the process: its own permissions are checked
  std::unordered_map<std::string, std::optional<FileKey>> names_;
  std::map<FileKey, SourceText> texts_;
  size_t bytes_read_ = 0;
  size_t files_open_ = 0;
  std::set<std::string> withheld_;
  std::set<FileKey> over_budget_;
};

}  // namespace hangpy::report
