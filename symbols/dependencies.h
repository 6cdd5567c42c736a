// Where the shared libraries an ELF file needs may lie on this machine: its DT_NEEDED names
// (ElfFile::dependencies), searched in its run path ($ORIGIN expanded) and then the system's
// library directories. For a core whose notes and dynamic linker's list were cut off: the
// executable, found, names the libraries to look for; each candidate counts only when its
// build-id is that of a module in memory (targets/module_recovery.h).
#pragma once

#include <string>
#include <vector>

#include "symbols/elf_file.h"

namespace hangpy::symbols {

// Paths, in the dynamic linker's order, that the libraries `file` needs may have (under
// `sysroot` for the system directories). At most 16 directories a library.
std::vector<std::string> library_candidates(const ElfFile& file, const std::string& sysroot = {});

}  // namespace hangpy::symbols
