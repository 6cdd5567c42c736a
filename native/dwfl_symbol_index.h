// An address -> symbol index of one libdwfl module, built in one pass over the symbol table
// libdwfl chose for it (a separate debug file's .symtab, else .symtab, .dynsym and the
// MiniDebugInfo .gnu_debugdata table).
//
// Why: dwfl_module_addrinfo scans every symbol of the module on each call, which on a debug file
// of tens of thousands of symbols costs milliseconds per frame; one pass and a binary search per
// pc cost the same as a single such call. The answer is libdwfl's own (the closest symbol whose
// size covers the pc, a global preferred over a weak or local alias at the same address); the
// rare pc no sized symbol covers (hand-written assembly labels) is left to dwfl_module_addrinfo.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hangpy::native {

struct SymbolAt {
  std::string name;
  uint64_t offset = 0;  // pc minus the symbol's address
};

class SymbolSource;

class DwflSymbolIndex {
 public:
  explicit DwflSymbolIndex(Dwfl_Module* module);
  ~DwflSymbolIndex();

  // The symbol covering `pc` (an address in the process); nullopt when no symbol does.
  std::optional<SymbolAt> find(uint64_t pc) const;

  // find()'s answers for a few pcs (sorted, unique), from one pass over the module's symbols
  // with nothing built or sorted: for a module only a handful of frames land in (the threads a
  // diagnosis unwinds), the index's sort is most of the cost.
  static std::vector<std::optional<SymbolAt>> find_in_one_pass(Dwfl_Module* module,
                                                               const std::vector<uint64_t>& pcs);

 private:
  struct Entry {
    uint64_t start = 0;
    uint64_t end = 0;  // one past the last byte
    int binding_rank = 0;  // global 3, weak 2, local 1: higher is preferred at the same start
    size_t order = 0;  // libdwfl's search order, which decides among equal candidates
    const char* name = nullptr;  // nullptr until read (name_of)
    int index = 0;  // in the module's symbol table
  };
  const char* name_of(const Entry& entry) const;

  Dwfl_Module* module_;
  std::unique_ptr<SymbolSource> source_;
  std::vector<Entry> by_start_;  // sized symbols, by start, the preferred first at equal starts
  std::vector<uint64_t> max_end_;  // max_end_[i]: the highest end among by_start_[0..i]
  std::vector<uint64_t> sizeless_starts_;  // sorted
};

}  // namespace hangpy::native
