// coreanalyze's exit codes: scripts tell outcomes apart by them (documented in README.md).
#pragma once

namespace hangpy::coreanalyze {

enum ExitCode : int {
  kExitSuccess = 0,
  kExitUsage = 2,          // bad command line, unknown --python value
  kExitBadInput = 3,       // unreadable file, not a core, wrong architecture
  kExitNoInterpreter = 4,  // no CPython interpreter found in the core
  kExitPartial = 5,        // output printed, but some stacks could not be read whole
  kExitWrongLayout = 6,    // the layout (detected or --python) does not fit the process
};

}  // namespace hangpy::coreanalyze
