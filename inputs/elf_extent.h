// How many bytes an ELF core holds, from its first bytes alone: the end of the furthest of its
// header tables and segments. A core arriving as a stream (standard input, decompression) is
// spooled only that far, so a stream that never ends (`coreanalyze - < /dev/zero`) or a
// decompression bomb behind a valid header cannot fill the disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace hangpy::inputs {

class ElfExtent {
 public:
  // The most header bytes kept to find the extent: 65535 program headers of 56 bytes fit.
  static constexpr size_t kMaxHeaderBytes = 4 << 20;

  // Feeds the stream's bytes in order (only the first kMaxHeaderBytes are looked at).
  void feed(std::span<const std::byte> data);

  // Whether the stream starts as an ELF file does; nullopt before 4 bytes were fed.
  std::optional<bool> is_elf() const;
  // The extent once the headers were fed; nullopt before, or when the headers cannot say (not a
  // 64-bit little-endian ELF, or program headers past kMaxHeaderBytes, or PN_XNUM segments).
  std::optional<uint64_t> extent() const { return extent_; }

 private:
  void compute();
  std::vector<std::byte> head_;
  std::optional<uint64_t> extent_;
  std::optional<bool> is_elf_;
  bool given_up_ = false;
};

}  // namespace hangpy::inputs
