// The symbol table libdwfl chose for a module, read straight from the section's bytes.
//
// Why: dwfl_module_getsym_info costs a libelf call per field (gelf_getsymshndx, gelf_getshdr of
// the symbol's section, elf_strptr) for every symbol; one pass over libtorch_cpu's 35,000
// .dynsym entries that way was a third of a default run on a DDP rank's core. Read as the
// Elf64_Sym array libelf already holds, the same pass costs a tenth of that.
//
// It is used only where it provably answers as libdwfl does: a 64-bit ET_EXEC/ET_DYN module whose
// table is one section (.symtab, else .dynsym) of its file or of the separate debug file libdwfl
// found for it (python3.11-dbg's: 41,700 symbols), with no MiniDebugInfo table merged in and no
// extended section indexes, and whose entries, sampled across the table, have the name, address
// and section libdwfl gives them. Anything else (a merged .gnu_debugdata table) is left to
// libdwfl. The debug file is opened here a second time, read-only and mapped: libdwfl does not
// hand out its Elf of it.
#pragma once

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace hangpy::native {

class RawSymbolTable {
 public:
  // nullopt when the module's table is not one plainly readable section (see above).
  static std::optional<RawSymbolTable> of(Dwfl_Module* module);

  int count() const { return count_; }
  // Symbol i's entry, its address in the process, and whether its section is allocated (the
  // address of a symbol in an unallocated section is not in the process); index 0 < i < count().
  const Elf64_Sym& entry(int i) const { return symbols_[i]; }
  uint64_t address(int i) const { return symbols_[i].st_value + bias_; }
  bool in_allocated_section(int i) const { return allocated_section(symbols_[i].st_shndx); }
  // Whether section `index` of the file is allocated (SHF_ALLOC); false for indexes it lacks.
  bool allocated_section(uint16_t index) const { return index < allocated_.size() && allocated_[index] != 0; }
  // The whole table (entries()[0] is the null symbol) and the bias address() adds, for a pass
  // over every entry that reads each one once (DwflSymbolIndex::find_in_one_pass).
  const Elf64_Sym* entries() const { return symbols_; }
  uint64_t bias() const { return bias_; }
  // Symbol i's name, or nullptr where st_name is outside the string table or unterminated.
  const char* name(int i) const;

 private:
  struct OwnedElf;  // a file opened here, closed with the last table that reads it
  static std::optional<RawSymbolTable> read(Dwfl_Module* module, int count, Elf* elf, uint64_t bias);

  RawSymbolTable() = default;
  std::shared_ptr<OwnedElf> owned_;
  Elf* elf_ = nullptr;
  const Elf64_Sym* symbols_ = nullptr;
  int count_ = 0;
  uint64_t bias_ = 0;
  size_t string_section_ = 0;
  std::vector<uint8_t> allocated_;  // by section index: 1 where SHF_ALLOC (bytes: read per symbol)
};

}  // namespace hangpy::native
