// libFuzzer target: a core arriving as a stream (standard input, decompressed data) spooled to a
// temporary file (inputs/sparse_spool.h, inputs/elf_extent.h). The first byte sets the piece size
// the rest is fed in. Property: once the ELF headers say how long the core is, no byte past that
// end is kept, whatever follows.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "inputs/elf_extent.h"
#include "inputs/sparse_spool.h"

using namespace ::hangpy::inputs;

using namespace hangpy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = size_t{1} << (data[0] & 15);
  std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  auto spool = inputs::SparseSpool::create("the fuzzer's core");
  if (!spool) return 0;
  if (data[0] & 0x80) spool->require_elf();
  inputs::ElfExtent extent;
  while (!input.empty()) {
    const auto part = input.first(std::min(piece, input.size()));
    extent.feed(part);
    if (!spool->append(part)) return 0;
    input = input.subspan(part.size());
  }
  if (extent.extent() && spool->size() > *extent.extent()) __builtin_trap();
  if (extent.extent() && spool->size() + spool->ignored_bytes() != size - 1) __builtin_trap();
  return 0;
}
