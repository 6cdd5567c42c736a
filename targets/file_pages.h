// The memory of a very large core read by pread(2) through a small set of page buffers, for the
// many small scattered reads an analysis makes, so that what it maps of a core of many GB stays
// bounded; cores up to kMappedUpTo are read through the mapping (see there).
//
// Why not the mapping libelf holds, for those: a fault through a file mapping also maps the pages
// around the one touched (fault-around), which a read sparse over many GB pays for without using,
// and which stays mapped (RSS): on a 2-core VM in November 2026 a first touch cost about 10 us,
// 46 us for one read in a fresh 64 KB region, where a pread of its page into a buffer already
// touched cost 2 us (3-4 us and 1.3-1.8 us on the VM of December, where the mapping wins up to
// 1 GB: kMappedUpTo). Pages kept in fresh memory cost as much as the mapping (each kept page is
// touched once), so few buffers are kept and reused: a set-associative cache of kSlots pages. No
// library keeps a bounded set of a file's pages for us (the kernel's page cache is behind both
// paths).
//
// Thread safety: const reads may be made from several threads (a mutex guards the buffers).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

#include "base/error.h"
#include "symbols/elf_file.h"

namespace hangpy::targets {

class FilePages {
 public:
  // `mapped_up_to`: files up to this size are read through the mapping (kMappedUpTo; a test
  // gives 0 to read a small file through the buffers).
  explicit FilePages(const symbols::ElfFile& file, uint64_t mapped_up_to = kMappedUpTo);
  FilePages(const FilePages&) = delete;
  FilePages& operator=(const FilePages&) = delete;

  // The bytes at `offset`, as ElfFile::read_file_offset gives them (the same errors: a range
  // past the end of the file is kNotFound).
  Expected<void> read(uint64_t offset, std::span<std::byte> out) const;
  // The file's bytes where read() copies them from the mapping (a file up to mapped_up_to), less
  // a patched ELF header (ElfFile::patched_header_bytes): a caller may copy from them itself, as
  // read() would, at offsets from `first` on; empty otherwise.
  struct MappedImage {
    std::span<const std::byte> bytes;
    uint64_t first = 0;
  };
  MappedImage mapped_image() const;

  static constexpr size_t kPageSize = 4096;
  // Files up to this size are read through the mapping. An analysis's reads come in clusters
  // (a thread's frames, a dict's entries, a module's data), so that fault-around maps several
  // wanted pages at once, and CoreFile copies a read from the mapping itself, past the layers
  // (mapped_image): on the 2-core VM, 2026-12-07, paired CPU against the buffers: a torch
  // process's gcore (263 MB) 1.18x, its kernel core (142 MB) 1.12x, a small script's gcore
  // (234 MB) 1.14x, a DDP rank's gcore (578 MB) 1.03x, for 3-13 MiB more RSS (file pages). There
  // an isolated first touch of the mapping cost 3-4 us, a pread of a page 1.3-1.8 us: a core read
  // sparsely over many GB keeps the buffers, and its RSS stays that of a small core. (16 MB until
  // 2026-12-07, then 64 MB.)
  static constexpr uint64_t kMappedUpTo = uint64_t{1} << 30;
  // Reads this large go to the file directly: the line table or bytecode of a big function.
  static constexpr size_t kDirectReadBytes = 4 * kPageSize;
  static constexpr size_t kSets = 16;
  static constexpr size_t kWays = 4;
  static constexpr size_t kSlots = kSets * kWays;  // 256 KiB of buffers at most, touched as used

 private:
  struct Slot {
    uint64_t page = UINT64_MAX;  // the file's page it holds; UINT64_MAX: none
    uint32_t size = 0;           // less than kPageSize for the file's last page
    uint32_t last_use = 0;
  };
  // Page `index` of the file, read into a slot if no slot holds it; empty when pread failed.
  // With mutex_ held.
  std::span<const std::byte> page(uint64_t index) const;

  const symbols::ElfFile& file_;
  const uint64_t mapped_up_to_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<std::byte[]> buffers_;  // kSlots pages, allocated on first use
  mutable std::array<Slot, kSlots> slots_{};
  mutable uint32_t uses_ = 0;
};

}  // namespace hangpy::targets
