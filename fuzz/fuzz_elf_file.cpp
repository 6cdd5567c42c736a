// libFuzzer target: the ELF reader (symbols/elf_file) on any bytes: opening, notes, build-id,
// symbol lookups by name and by address, reads by virtual address and file offset.
#include <cstddef>
#include <cstdint>

#include "fuzz/memory_file.h"
#include "symbols/elf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
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
