#include "targets/reader_priority.h"

namespace hangpy::targets {

RaisedPriority RaisedPriority::raise() {
  RaisedPriority priority;
  // sched_*(0, ...) is the calling thread on Linux, not the whole process.
  priority.policy_ = sched_getscheduler(0);
  if (priority.policy_ < 0 || sched_getparam(0, &priority.param_) != 0) return priority;
  if (priority.policy_ == SCHED_FIFO || priority.policy_ == SCHED_RR) return priority;  // already
  sched_param lowest{};
  lowest.sched_priority = sched_get_priority_min(SCHED_FIFO);
  // SCHED_RESET_ON_FORK: nothing this thread starts inherits the real-time policy.
  priority.raised_ = sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &lowest) == 0;
  return priority;
}

void RaisedPriority::restore() {
  if (!raised_) return;
  raised_ = false;
  sched_setscheduler(0, policy_, &param_);
}

}  // namespace hangpy::targets
