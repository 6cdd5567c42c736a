// `coreanalyze collect`: snapshot a hung job's Python processes, on this node or on every node
// of a SLURM job (srun --overlap) or a pdsh host list, into one directory; then the triage.
//
// Why a subcommand of coreanalyze and not a script: the coreanalyze binary is what gets copied to
// cluster nodes, and a node may have no usable Python of its own (the job's Python may be a venv
// on a shared file system, or broken in the very way being debugged). The subcommand finds the
// processes through /proc and runs this same binary with --pid on each, one child process per
// target: a target whose analysis crashes or hangs loses only its own result (it is killed at
// --timeout), and analyses run in parallel. srun and pdsh run the same subcommand on each node.
#pragma once

namespace hangpy::jobs {

// argv[0] is "collect". Returns the exit code.
int run_collect(int argc, char** argv);

}  // namespace hangpy::jobs
