// From a target to every thread's Python stack: find the version, choose the layout table, find
// the interpreter states and walk them. The single entry point both shells call.
#pragma once

#include <optional>
#include <string>

#include "cpython/stacks.h"
#include "cpython/target.h"

namespace hangpy::cpython {

struct AnalyzeOptions {
  std::optional<PythonVersion> forced_version;  // --python X.Y[t]
  // How the user makes the target's binaries available, in the shell's own words (coreanalyze
  // names its options, gdb its commands): added to "no Python interpreter found" when a symbol
  // the layout needs is missing. Empty: no remedy is named.
  std::string missing_binaries_remedy;
  // false: the threads are left unnamed, for name_threads() to name later (a process held while
  // it is read is let go first: threading's objects are Python data, not its stacks, and reading
  // them cost a quarter of a torch rank's stop).
  bool name_threads = true;
};

// Errors: kNotFound when no interpreter can be found, kUnsupported when the version has no table.
// Problems that still leave a result are warnings in the result.
Expected<ProcessStacks> analyze(const Target& target, const AnalyzeOptions& options);

// Names `stacks`' threads as analyze() does (threading's names, by each thread's interpreter):
// for stacks read with AnalyzeOptions::name_threads false. Nothing without a layout.
void name_threads(const Target& target, ProcessStacks& stacks);

}  // namespace hangpy::cpython
