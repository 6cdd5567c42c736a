// `coreanalyze diff A B`: two looks at the same job (collect directories, JSON results, snapshot
// cores or cores), process by process and thread by thread: moved, busy, still, new or gone,
// with the frames that moved; then each group of the first look's triage called stuck, busy or
// slow. Two snapshots tell a hung job from a slow one; one cannot.
#pragma once

namespace hangpy::jobs {

// argv[0] is "diff". Returns the exit code.
int run_diff(int argc, char** argv);

}  // namespace hangpy::jobs
