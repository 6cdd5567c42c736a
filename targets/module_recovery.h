// The mapped files of a core that lists none (no NT_FILE: gdb's gcore writes its notes at the end
// of the file, so a cut core loses them; some dumpers write none), recovered from the process's
// own memory: the kernel and gcore save the first page of every file-backed ELF mapping, which
// holds the ELF header and program headers; the dynamic linker's r_debug list (reached through
// the executable's DT_DEBUG) names each module's file; the auxiliary vector on the main stack
// names the executable (AT_EXECFN). Every read is bounded and checked; what cannot be read is
// left out, never guessed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "targets/core_file.h"
#include "cpython/address_space.h"

namespace hangpy::targets {

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
  bool headers_from_files = false;  // none was: they were read from the modules' files
  size_t named = 0;            // modules of them that got a path
  std::optional<uint64_t> executable_start;  // where the executable's header is mapped
  // "--exe", "AT_EXECFN", "the path its wrapper recorded", "" when unnamed.
  std::string executable_named_by;
};

// What recovery may ask of this machine's files: the build-id (hex) of the file a process path
// names here (under the sysroot), and the paths the libraries an executable needs may have
// (symbols/dependencies.h), as process paths.
struct FileFacts {
  std::function<std::optional<std::string>(const std::string& path)> build_id;
  // The first bytes of the file a process path names here (its ELF header and program headers),
  // for a core that saved no module's first page (qemu-user's cores save no text at all).
  std::function<std::optional<std::vector<std::byte>>(const std::string& path)> file_start;
  std::function<std::vector<std::string>(const std::string& executable)> library_candidates;
};

// `segments`: the core's segments in any order; `memory`: what the core holds; `executable`:
// the executable's path when the user gave one (--exe), which wins over AT_EXECFN;
// `executable_hint`: the path an ABRT directory or apport report recorded, used when neither
// names it. When none does (a core cut before its notes loses the main stack, and AT_EXECFN with
// it), the paths of Python executables the process's data holds (sys.executable, argv[0], the
// interpreter's configuration, in UTF-8 or UTF-32) are tried with `has_build_id` against the
// build-id the executable's own header carries: a path is taken only when its file is that very
// binary, never guessed. When the core holds no module's header at all, the headers are read from
// the files instead: the executable's (--exe or AT_EXECFN) placed where AT_PHDR says, then each
// library of the dynamic linker's list at its l_addr. Then modules the dynamic linker's list did not name (it may be cut off
// too) are looked for among the libraries the executable needs, by build-id the same way.
// `noted_auxv`: the core's NT_AUXV when it has one (else the vector is looked for on the stack).
RecoveredModules recover_modules(const cpython::AddressSpace& memory,
                                 const std::vector<SegmentStart>& segments,
                                 const std::optional<std::string>& executable,
                                 const std::optional<std::string>& executable_hint,
                                 uint64_t page_size, const FileFacts& files = {},
                                 const std::vector<std::pair<uint64_t, uint64_t>>& noted_auxv = {});

}  // namespace hangpy::targets
