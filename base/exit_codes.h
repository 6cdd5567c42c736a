// coreanalyze's exit codes: scripts tell outcomes apart by them (documented in README.md). When
// several apply, the first cause wins: an unreadable or truncated core, then a binary that is not
// the one the core ran, then the rest.
#pragma once

namespace hangpy {

enum ExitCode : int {
  kExitSuccess = 0,
  kExitUsage = 2,          // bad command line, unknown --python layout, missing --sysroot dir
  kExitBadInput = 3,       // unreadable file, not a core, wrong architecture
  kExitNoInterpreter = 4,  // no CPython interpreter found in the core
  kExitPartial = 5,        // output printed, but some stacks could not be read whole
  kExitWrongLayout = 6,    // the layout (detected or --python) does not fit the process
  kExitSnapshotFailed = 7, // stacks printed, but --snapshot FILE could not be written
  kExitTruncated = 8,      // the core is truncated, and the stacks could not be read because of it
  kExitWrongBinary = 9,    // a binary's build-id is not the core's, and the stacks suffered
  kExitNotPermitted = 10,  // --pid: not allowed to read or stop the process (ptrace_scope,
                           // CAP_SYS_PTRACE, another tracer such as gdb)
  kExitStopTimeout = 11,   // --pid: the process stayed stopped past --max-stop; released
  kExitProcessGone = 12,   // --pid: the process exited (or ran exec) while it was analysed
};

inline constexpr const char* kExitCodesHelp =
    "Exit codes: 0 success, 2 usage error, 3 unreadable input or not a core,\n"
    "4 no Python interpreter found, 5 partial result,\n"
    "6 the Python layout (detected or --python) does not fit the process,\n"
    "7 the snapshot could not be written (stacks printed), 8 the core is truncated,\n"
    "9 a binary is not the one the core ran (build-id differs),\n"
    "10 --pid: not permitted to read or stop the process,\n"
    "11 --pid: the process stayed stopped longer than --max-stop (it was released),\n"
    "12 --pid: the process exited or ran exec while it was analysed.\n";

}  // namespace hangpy
