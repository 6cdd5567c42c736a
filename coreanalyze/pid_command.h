// coreanalyze --pid: each live process analysed in turn by analysis::analyse_process, as a core
// is (its target, the hold and the unwinder: targets/live_target.h, targets/live_hold.h). Text reports follow each other; --json prints one document for one
// process and an array of documents for several.
#pragma once

#include "coreanalyze/command_line.h"

namespace hangpy::coreanalyze {

// Returns the exit code: the first process's that is not kExitSuccess, else kExitSuccess.
int analyse_live_processes(const CommandLine& line);

}  // namespace hangpy::coreanalyze
