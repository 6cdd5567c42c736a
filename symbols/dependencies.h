// The shared libraries an ELF file asks for and where the dynamic linker would look for them: its
// DT_NEEDED names, searched in its DT_RPATH (or DT_RUNPATH, with $ORIGIN expanded) and then the
// system's library directories. For a core whose notes and dynamic linker's list were cut off:
// the executable, found, names the libraries to look for; each candidate counts only when its
// build-id is that of a module in memory (targets/module_recovery.h).
#pragma once

#include <string>
#include <vector>

namespace hangpy::symbols {

// Paths, in the dynamic linker's order, that the libraries `path` needs may have on this machine
// (under `sysroot` for the system directories and absolute run paths); empty when the file is
// not a dynamic ELF file. At most 64 libraries, 16 directories each.
std::vector<std::string> library_candidates(const std::string& path, const std::string& sysroot = {});

}  // namespace hangpy::symbols
