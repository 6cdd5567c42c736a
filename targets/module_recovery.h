// The mapped files of a core that lists none (no NT_FILE: gdb's gcore writes its notes at the end
// of the file, so a cut core loses them; some dumpers write none), recovered from the process's
// own memory: the kernel and gcore save the first page of every file-backed ELF mapping, which
// holds the ELF header and program headers; the dynamic linker's r_debug list (reached through
// the executable's DT_DEBUG) names each module's file; the auxiliary vector on the main stack
// names the executable (AT_EXECFN). Every read is bounded and checked; what cannot be read is
// left out, never guessed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "targets/core_file.h"
#include "cpython/address_space.h"

namespace hangpy::coreanalyze {

// Where a segment of the core starts, and whether the process could write it.
struct SegmentStart {
  uint64_t address = 0;
  uint64_t size = 0;
  bool writable = false;
};

struct RecoveredModules {
  // One entry per file-backed PT_LOAD of every module whose file is named, as NT_FILE would list
  // it (page-aligned, file offsets in bytes), in ascending address order.
  std::vector<FileMapping> mappings;
  size_t elf_headers = 0;      // ELF headers found at the start of segments
  size_t named = 0;            // modules of them that got a path
  std::optional<uint64_t> executable_start;  // where the executable's header is mapped
  // "--exe", "AT_EXECFN", "the path its wrapper recorded", "" when unnamed.
  std::string executable_named_by;
};

// `segments`: the core's segments in any order; `memory`: what the core holds; `executable`:
// the executable's path when the user gave one (--exe), which wins over AT_EXECFN;
// `executable_hint`: the path an ABRT directory or apport report recorded, used when neither
// names it.
RecoveredModules recover_modules(const cpython::AddressSpace& memory,
                                 const std::vector<SegmentStart>& segments,
                                 const std::optional<std::string>& executable,
                                 const std::optional<std::string>& executable_hint,
                                 uint64_t page_size);

}  // namespace hangpy::coreanalyze
