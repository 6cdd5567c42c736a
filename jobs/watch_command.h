// `coreanalyze watch`: catch a hang when it happens. Every --interval the job's Python processes
// are looked at (a `collect` of their stacks, without locals, cores or triage: a millisecond's stop
// each), each look compared with the one before (triage/progress.h), and each process's time
// without progress counted. When the job (or --any process) has made none for --after, the
// evidence is captured at once (`collect` with snapshot cores and its triage), before a scheduler,
// an elastic agent or a watchdog kills the processes.
//
// Why looks through `collect` children rather than in this process: a look is exactly a collect
// (the same selection, on this node or every node of a SLURM job), and a process whose analysis
// crashes or hangs costs that look only, never the watch.
#pragma once

namespace hangpy::jobs {

inline constexpr int kExitHangCaught = 20;

// argv[0] is "watch". Returns the exit code.
int run_watch(int argc, char** argv);

}  // namespace hangpy::jobs
