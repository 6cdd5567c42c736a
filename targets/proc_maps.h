// /proc/PID/maps text, as ABRT (`maps`) and apport (ProcMaps) save it beside a core: the files
// the process mapped, for a core whose NT_FILE note is missing (cores from some dumpers, or one
// cut before its notes were read whole).
#pragma once

#include <string_view>
#include <vector>

#include "targets/core_file.h"

namespace hangpy::targets {

// The file-backed lines ("START-END PERMS OFFSET DEV INODE /path"), in text order. Lines that map
// no file (anonymous, [heap], [stack], [vdso]) and lines that do not parse are left out: the text
// comes from outside the core and is trusted no more than it.
std::vector<FileMapping> parse_proc_maps(std::string_view text);

// Every line's range and protection (PF_R | PF_W | PF_X), anonymous ones too, in text order.
struct MappedRange {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t protection = 0;
};
std::vector<MappedRange> parse_proc_map_ranges(std::string_view text);

}  // namespace hangpy::targets
