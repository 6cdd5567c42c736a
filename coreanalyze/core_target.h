// A core file as the engine's Target: memory from the core's PT_LOAD segments, falling back to
// the mapped files (NT_FILE) for read-only file-backed pages the core left out; threads from
// NT_PRSTATUS; symbols from the mapped ELF files, found through --exe, --sysroot and --lib-path.
// A mapped file is opened only when a symbol lookup or a read needs it (the executable at once):
// a PyTorch process maps hundreds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cpython/target.h"

namespace hangpy::coreanalyze {

class CoreFile;

struct CoreOptions {
  std::string core_path;
  std::optional<std::string> executable;  // --exe: overrides the executable the core names
  std::string sysroot;                    // --sysroot: prefix for every path the core records
  std::vector<std::string> lib_paths;     // --lib-path: directories searched by file name
};

// Facts about the dumped process (NT_PRPSINFO, NT_SIGINFO, NT_AUXV).
struct ProcessInfo {
  int64_t pid = 0;
  std::string command;      // pr_fname
  std::string arguments;    // pr_psargs
  std::optional<int> signal;
  std::string executable;   // the path the core names for the main program (AT_EXECFN / NT_FILE)
};

class CoreTarget : public cpython::Target {
 public:
  // Errors: kIo (cannot open or read), kInvalidInput (empty, not ELF, not a core, wrong
  // architecture). A truncated core opens, with a warning.
  static Expected<std::unique_ptr<CoreTarget>> open(const CoreOptions& options);

  virtual const ProcessInfo& process() const = 0;
  virtual const CoreFile& core() const = 0;
  // Problems that still let analysis go on: truncated segments, binaries not found, build-id
  // mismatches. One line each. Files opened later (by find_symbol, memory reads or modules())
  // add theirs then.
  virtual const std::vector<std::string>& warnings() const = 0;
};

}  // namespace hangpy::coreanalyze
