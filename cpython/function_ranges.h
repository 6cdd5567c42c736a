// Where the machine-code function around a program counter begins and ends, without symbols: a
// stripped build names none of its static C functions, but every module carries the call-frame
// search table the linker writes for exception unwinding (.eh_frame_hdr, the PT_GNU_EH_FRAME
// segment), one entry per function. A built-in's C function (cpython/builtin_call.h) is running
// in a frame exactly when that frame's pc lies in the range this finds for it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "cpython/address_space.h"
#include "cpython/target.h"

namespace hangpy::cpython {

class FunctionRanges {
 public:
  // `modules` as a Target lists them; only those with a mapped range are searched, the ELF
  // header being read at their lowest address.
  FunctionRanges(const AddressSpace& memory, std::vector<MappedModule> modules);

  // [start, end) of the function whose code holds `pc`, from its frame description entry;
  // nullopt when no module holds `pc`, the module has no readable search table, or no entry
  // covers `pc`. Each module's table is located once.
  std::optional<MemoryRange> function_at(uint64_t pc) const;

 private:
  struct SearchTable {
    uint64_t header = 0;  // .eh_frame_hdr's address: the table's entries are relative to it
    uint64_t entries = 0;
    uint64_t count = 0;
  };
  std::optional<SearchTable> table_of(const MappedModule& module) const;
  std::optional<MemoryRange> entry_range(const SearchTable& table, uint64_t fde) const;

  const AddressSpace& memory_;
  std::vector<MappedModule> modules_;  // with a mapped range, sorted by start
  mutable std::map<uint64_t, std::optional<SearchTable>> tables_;  // by module start
  mutable std::map<uint64_t, std::optional<uint8_t>> pointer_encodings_;  // by CIE address
};

}  // namespace hangpy::cpython
