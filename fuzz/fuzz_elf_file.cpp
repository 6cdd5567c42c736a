// libFuzzer target: the ELF reader (symbols/elf_file) on any bytes: opening, notes, build-id,
// symbol lookups by name and by address, reads by virtual address and file offset; and the plain
// header reader (symbols/elf_header_image), which must answer as libelf does wherever it answers
// (a disagreement traps).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fuzz/memory_file.h"
#include "symbols/elf_file.h"
#include "symbols/elf_header_image.h"

namespace {

void plain_header_as_libelf(const uint8_t* data, size_t size) {
  const std::span<const std::byte> image(reinterpret_cast<const std::byte*>(data), size);
  const auto plain = hangpy::symbols::read_plain_header_image(image);
  if (!plain) return;
  auto elf = hangpy::symbols::ElfFile::from_image(std::vector<std::byte>(image.begin(), image.end()), "image");
  if (!elf || (*elf)->build_id() != plain->build_id) __builtin_trap();
  const auto& loads = (*elf)->load_segments();
  if (loads.size() != plain->load_segments.size()) __builtin_trap();
  for (size_t i = 0; i < loads.size(); ++i) {
    const auto& a = loads[i];
    const auto& b = plain->load_segments[i];
    if (a.vaddr != b.vaddr || a.memsz != b.memsz || a.file_offset != b.file_offset || a.filesz != b.filesz ||
        a.flags != b.flags)
      __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  plain_header_as_libelf(data, size);
  hangpy::fuzz::MemoryFile file(data, size);
  if (!file.ok()) return 0;
  auto elf = hangpy::symbols::ElfFile::open(file.path());
  if (!elf) return 0;
  (void)(*elf)->notes();
  (void)(*elf)->build_id();
  for (const char* name : {"_PyRuntime", "Py_Version", "PyEval_EvalFrameEx", "interp_head",
                           "_PyEval_EvalFrameDefault", "main"}) {
    if (auto symbol = (*elf)->find_symbol(name)) (void)(*elf)->symbol_at(symbol->value);
  }
  std::byte buffer[64];
  for (const auto& segment : (*elf)->load_segments()) {
    (void)(*elf)->read_vaddr(segment.vaddr, buffer);
    (void)(*elf)->read_file_offset(segment.file_offset, buffer);
  }
  return 0;
}
