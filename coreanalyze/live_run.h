// coreanalyze --pid: each live process analysed in turn, as a core would be (see live_target.h
// and process_stop.h). Text reports follow each other; --json prints one document for one
// process and an array of documents for several.
#pragma once

#include "coreanalyze/command_line.h"

namespace hangpy::coreanalyze {

// Returns the exit code: the first process's that is not kExitSuccess, else kExitSuccess.
int analyse_live_processes(const CommandLine& line);

}  // namespace hangpy::coreanalyze
