// A core file as the engine's Target: memory from the core's PT_LOAD segments, falling back to
// the mapped files (NT_FILE) for read-only file-backed pages the core left out; threads from
// NT_PRSTATUS; symbols from the mapped ELF files, found through --exe, --sysroot and --lib-path.
// A mapped file is opened only when a symbol lookup or a read needs it (the executable at once):
// a PyTorch process maps hundreds.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/process_target.h"
#include "base/error.h"
#include "cpython/target.h"

namespace hangpy::symbols {
class ElfFile;
}

namespace hangpy::targets {

class CoreFile;

struct CoreOptions {
  std::string core_path;
  std::optional<std::string> executable;  // --exe: overrides the executable the core names
  // The executable's path as an ABRT directory or apport report recorded it: used only when
  // there is no --exe and the path the core names (under --sysroot) finds no file.
  std::optional<std::string> executable_hint;
  // /proc/PID/maps text an ABRT directory or apport report saved: the mapped files, used only
  // when the core has no NT_FILE note.
  std::optional<std::string> maps_hint;
  std::string sysroot;                    // --sysroot: prefix for every path the core records
  std::vector<std::string> lib_paths;     // --lib-path: directories searched by file name
  // What each file descriptor was, as an ABRT directory saved it (open_fds): facts() answers
  // with it first.
  std::map<int64_t, std::string> saved_open_files;
  // The environment and host name an ABRT directory or apport report saved: environment()
  // answers with them when the core itself holds no environment.
  std::optional<std::string> saved_environment;
  std::string saved_environment_source;  // "ABRT environ", "apport ProcEnviron"
  std::optional<std::string> saved_host;  // ABRT `hostname`
};

using cpython::ProcessInfo;

// What can explain an analysis that failed, in the order to name it: a core cut short explains
// everything after it; a binary that is not the one the core ran explains wrong symbols; missing
// binaries explain missing symbols.
struct InputCause {
  enum class Kind { kTruncatedCore, kCorruptCore, kWrongBinary, kMissingBinaries };
  Kind kind;
  std::string message;  // one line
};

class CoreTarget : public analysis::ProcessTarget {
 public:
  // Errors: kIo (cannot open or read), kInvalidInput (empty, not ELF, not a core, wrong
  // architecture). A truncated core opens, with a warning.
  static Expected<std::unique_ptr<CoreTarget>> open(const CoreOptions& options);

  // From NT_PRPSINFO, NT_SIGINFO and NT_AUXV.
  virtual const ProcessInfo& process() const = 0;
  virtual const CoreFile& core() const = 0;
  virtual const CoreOptions& options() const = 0;  // as opened

  // Problems that still let analysis go on: truncated segments, binaries not found, build-id
  // mismatches. One line each. Files opened later (by find_symbol, memory reads or modules())
  // add theirs then.
  virtual const std::vector<std::string>& warnings() const = 0;
  // What is wrong with the input itself, most telling first (see InputCause).
  virtual std::vector<InputCause> causes() const = 0;
  // The host file that stands for the module the core recorded at `recorded_path` (an NT_FILE
  // path), found as every other read of this target finds it (--exe, --sysroot, --lib-path,
  // build-id); nullopt when there is none. Opens the file on first need.
  virtual std::optional<std::string> module_file(const std::string& recorded_path) const = 0;
  // The opened file behind that module, as module_file() finds it; nullptr when there is none.
  virtual const symbols::ElfFile* module_elf_file(const std::string& recorded_path) const = 0;
  // The binaries this target has opened so far (executable, libraries), as host paths.
  virtual std::vector<std::string> opened_files() const = 0;
  // The name of the function whose symbol (.symtab or .dynsym of the module mapped there)
  // contains `pc`; nullopt when no module or symbol does. No unwinding: one lookup.
  virtual std::optional<std::string> function_at(uint64_t pc) const = 0;
  // The PID, threads and registers, container PIDs and function names the core records, and what
  // a file descriptor was: its saved open files', else its snapshot's pipe and TCP ends.
  analysis::TargetFacts facts() const override;
  // A snapshot's note, else the initial stack's environment strings, else libc's environ, else
  // what the core's wrapper saved (CoreOptions); the host only as the wrapper saved it
  // (environment_sources.cpp).
  cpython::ProcessEnvironment environment() const override;
  // libdwfl over the core, or a snapshot's recorded stacks (core_unwinding.h).
  std::unique_ptr<analysis::NativeUnwinding> native_unwinding(bool inlined_frames) const override;
};

}  // namespace hangpy::targets
