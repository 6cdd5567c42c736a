// An unnamed temporary file (O_TMPFILE in $TMPDIR or /tmp) that a core is written into as it is
// produced (copied from a pipe, decompressed, decoded): blocks of zeros are skipped, so they stay
// holes, as the kernel leaves them in the core it writes. The file lives as long as the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/error.h"
#include "inputs/elf_extent.h"

namespace hangpy::inputs {

class SparseSpool {
 public:
  // `what` names the content in error messages ("the core on standard input").
  static Expected<SparseSpool> create(std::string what);
  SparseSpool(SparseSpool&& other) noexcept;
  SparseSpool& operator=(SparseSpool&&) = delete;
  ~SparseSpool();

  // Appends `data`; the zero blocks of it become holes. Only the core is kept: once the ELF
  // headers at its start say how long it is (elf_extent.h), bytes past that end are dropped
  // (ignored_bytes()). Errors: kInvalidInput (with `must_be_elf`, data that does not start as an
  // ELF file), kIo (the disk is full, or would have less than kFreeSpaceReserve left: it says so).
  Expected<void> append(std::span<const std::byte> data);
  // Data that does not start as an ELF file is refused at once (decompressed data: a core).
  void require_elf() { must_be_elf_ = true; }
  // The bytes dropped after the core's end.
  uint64_t ignored_bytes() const { return ignored_; }
  // Spooling stops before the temporary directory's file system has less than this left.
  static constexpr uint64_t kFreeSpaceReserve = 64 << 20;
  // Sets the file's size to what was appended (a trailing hole has no block to give it) and
  // returns a path that opens the file for the rest of the process: /proc/self/fd/N.
  Expected<std::string> finish();
  uint64_t size() const { return size_; }

 private:
  SparseSpool(int fd, std::string directory, std::string what)
      : fd_(fd), directory_(std::move(directory)), what_(std::move(what)) {}
  Expected<void> write_at(std::span<const std::byte> data, uint64_t offset);
  Expected<void> check_free_space() const;

  int fd_ = -1;
  std::string directory_;
  std::string what_;
  uint64_t size_ = 0;
  bool finished_ = false;
  ElfExtent extent_;
  bool must_be_elf_ = false;
  uint64_t ignored_ = 0;
  uint64_t written_since_check_ = 0;  // bytes written since the free space was last looked at
};

}  // namespace hangpy::inputs
