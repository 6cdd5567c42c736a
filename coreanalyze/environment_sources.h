// Where coreanalyze finds a process's label variables and host (report/process_labels.h): for a
// core, its initial stack, else libc's environ, else what its wrapper saved (ABRT `environ` and
// `hostname`, apport ProcEnviron); for a live process, /proc/PID/environ and this machine's name.
#pragma once

#include "inputs/core_input.h"
#include "targets/core_target.h"
#include "report/process_labels.h"

namespace hangpy::coreanalyze {

cpython::ProcessEnvironment core_environment(const targets::CoreTarget& target, const inputs::CoreInput& unwrapped);

cpython::ProcessEnvironment live_environment(int pid);

// What the program knows of itself now (cpython/runtime_labels.h), merged into `environment`:
// os.environ read from `target` itself, never through a recording (the snapshot keeps the label
// variables in its note, not the pages of os.environ, which hold every other variable too); the
// spawn index and DataLoader worker id read from `analyzed` (a snapshot keeps those locals).
void add_program_labels(cpython::ProcessEnvironment& environment, const cpython::Target& target,
                        const cpython::Target& analyzed, const cpython::ProcessStacks& stacks);

}  // namespace hangpy::coreanalyze
