// An unnamed temporary file (O_TMPFILE in $TMPDIR or /tmp) that a core is written into as it is
// produced (copied from a pipe, decompressed, decoded): blocks of zeros are skipped, so they stay
// holes, as the kernel leaves them in the core it writes. The file lives as long as the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/error.h"

namespace hangpy::coreanalyze {

class SparseSpool {
 public:
  // `what` names the content in error messages ("the core on standard input").
  static Expected<SparseSpool> create(std::string what);
  SparseSpool(SparseSpool&& other) noexcept;
  SparseSpool& operator=(SparseSpool&&) = delete;
  ~SparseSpool();

  // Appends `data`; the zero blocks of it become holes. Errors: kIo (disk full says so).
  Expected<void> append(std::span<const std::byte> data);
  // Sets the file's size to what was appended (a trailing hole has no block to give it) and
  // returns a path that opens the file for the rest of the process: /proc/self/fd/N.
  Expected<std::string> finish();
  uint64_t size() const { return size_; }

 private:
  SparseSpool(int fd, std::string directory, std::string what)
      : fd_(fd), directory_(std::move(directory)), what_(std::move(what)) {}
  Expected<void> write_at(std::span<const std::byte> data, uint64_t offset);

  int fd_ = -1;
  std::string directory_;
  std::string what_;
  uint64_t size_ = 0;
  bool finished_ = false;
};

}  // namespace hangpy::coreanalyze
