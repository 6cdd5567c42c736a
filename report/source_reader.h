// Source lines for the text report, read from the analysing machine's files (under --sysroot, or a
// live process's own root). Files are read once and cached; an unreadable file just means no
// source line. A file name comes from the target, so it is an untrusted path
// (base/target_named_file.h): opened inside the root only, a regular file only, bounded in bytes
// per file and per line; and when this program is more privileged than the process was (root, or
// another user), a file the process could not read itself is not shown.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

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

class FileSourceReader : public SourceReader {
 public:
  static constexpr size_t kMaxFileBytes = 8 << 20;  // no source file worth showing is bigger
  static constexpr size_t kMaxLineBytes = 4096;     // a longer line is cut

  explicit FileSourceReader(SourcePolicy policy = {});
  std::optional<std::string> line(const std::string& file, int line_number) override;
  std::optional<std::string> raw_line(const std::string& file, int line_number) override;

  // The files whose lines were not shown because the process could not have read them (sorted).
  const std::set<std::string>& withheld() const { return withheld_; }

 private:
  // A file's bytes (at most kMaxFileBytes) and where each line starts: a line is cut out when it
  // is asked for, not every line of the file when one is (most files give one line or two).
  struct SourceText {
    std::string bytes;
    std::vector<size_t> line_starts;
  };
  const SourceText* text_of(const std::string& file);
  SourcePolicy policy_;
  bool more_privileged_ = false;  // than the process: its own permissions are checked
  std::unordered_map<std::string, std::optional<SourceText>> files_;
  std::set<std::string> withheld_;
};

}  // namespace hangpy::report
