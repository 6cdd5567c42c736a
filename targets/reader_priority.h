// coreanalyze's own priority while a process is held stopped: the stop lasts as long as the reader
// takes, and on a loaded machine most of that is the reader waiting for a CPU behind the load
// (measured on 2 busy cores, a torch rank of 149 threads: 17.9 ms median stop at normal priority,
// 3.3 ms under SCHED_FIFO). Where permitted (root, CAP_SYS_NICE or an RLIMIT_RTPRIO), the reading
// thread runs SCHED_FIFO at the lowest real-time priority for the window only; elsewhere nothing
// changes. The kernel's real-time throttling (sched_rt_runtime_us) and --max-stop bound it.
#pragma once

#include <sched.h>

namespace hangpy::targets {

class RaisedPriority {
 public:
  RaisedPriority() = default;
  // Raises the calling thread to SCHED_FIFO 1; raised() false when not permitted.
  static RaisedPriority raise();
  bool raised() const { return raised_; }
  // Back to the policy and priority it had; once.
  void restore();

 private:
  bool raised_ = false;
  int policy_ = SCHED_OTHER;
  sched_param param_{};
};

}  // namespace hangpy::targets
