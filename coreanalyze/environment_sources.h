// Where coreanalyze finds a process's label variables and host (report/process_labels.h): for a
// core, its initial stack, else libc's environ, else what its wrapper saved (ABRT `environ` and
// `hostname`, apport ProcEnviron); for a live process, /proc/PID/environ and this machine's name.
#pragma once

#include "inputs/core_input.h"
#include "targets/core_target.h"
#include "report/process_labels.h"

namespace hangpy::coreanalyze {

report::ProcessEnvironment core_environment(const CoreTarget& target, const CoreInput& unwrapped);

report::ProcessEnvironment live_environment(int pid);

}  // namespace hangpy::coreanalyze
