// A live process as a snapshot core records it (`coreanalyze --pid PID --snapshot FILE`): the
// registers read while its threads were stopped, its facts from /proc/PID, its auxiliary vector
// (/proc/PID/auxv) and mappings (/proc/PID/maps). The memory is what the analysis read.
#pragma once

#include <vector>

#include "targets/process_stop.h"
#include "targets/snapshot_process.h"

namespace hangpy::targets {

// `stopped` holds the registers PTRACE_GETREGS gave; without them (--nonblocking) each thread
// keeps the pc and stack pointer /proc/PID/task/TID/syscall showed and no thread pointer.
SnapshotProcess live_snapshot_process(const cpython::ProcessInfo& facts,
                                      const std::vector<StoppedProcess::RegisterSet>& stopped,
                                      const std::vector<cpython::NativeThread>& threads);

}  // namespace hangpy::targets
