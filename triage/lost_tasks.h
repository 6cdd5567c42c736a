// Results nobody will make: a process waits for a multiprocessing.Pool's result (pool.map,
// apply, AsyncResult.get) whose only wakers are the pool's worker processes, and every one of
// them waits for work. The task is in no worker: its worker died with it (killed, out of memory)
// and Pool's replacement never runs it again.
#pragma once

#include <string>
#include <vector>

#include "triage/merge.h"
#include "triage/place.h"

namespace hangpy::triage {

struct LostPoolTask {
  int process = 0;           // the process that waits
  Place place;               // where: "`Pool.map` at train.py:38"
  std::vector<int> workers;  // its pool's worker processes, every one waiting for work
};

std::vector<LostPoolTask> find_lost_pool_tasks(const Triage& triage);

// "a task of `Pool.map` at train.py:38 is lost: process 0 (PID 8040) waits for its result, and
// every worker of its pool (processes 1-2) waits for work"
std::string describe_lost_pool_task(const Triage& triage, const LostPoolTask& lost);

}  // namespace hangpy::triage
