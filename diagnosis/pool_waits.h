// A concurrent.futures thread pool that starves itself: every worker of one ThreadPoolExecutor
// (the threads whose `_worker` frame holds the same work queue) waits for a Future that has not
// started (PENDING), and no worker of any executor is free to start one. What they wait for was
// queued behind them: each worker waits for the pool, the pool for a worker. Pure: reads the
// frames' locals and the Futures' state through the engine's readers.
#pragma once

#include <vector>

#include "diagnosis/context.h"
#include "diagnosis/diagnosis.h"

namespace hangpy::diagnosis::detail {

// One cycle per starved pool: its workers, and a line that says it ("deadlock: thread
// "loader_0" (LWP 12), the only worker of its ThreadPoolExecutor, waits in `Future.result` at
// app.py:22 for a Future that has not started; no worker is left to start it").
std::vector<WaitCycle> find_starved_pools(const Context& context, const ProcessDiagnosis& result);

// A thread waiting for a task's result (multiprocessing's Pool.map, .apply, AsyncResult.get;
// concurrent.futures' Future.result) has its wait named in the program's terms, the primitive
// after it: "the result of `Pool.map` (Event 0x7f...)".
void name_result_wait(const Context& context, size_t index, ThreadDiagnosis& thread);

}  // namespace hangpy::diagnosis::detail
