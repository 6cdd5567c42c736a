// What asyncio's tasks wait for, in the vocabulary the threads' diagnosis uses (WaitKind), who
// waits for whom, and the cycles among them (deadlocks), found by the same wait-for graph search
// as the threads' (wait_graph.h). Pure: from what cpython/asyncio_tasks.h read, no memory reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cpython/asyncio_tasks.h"
#include "diagnosis/diagnosis.h"

namespace hangpy::diagnosis {

struct TaskWait {
  std::optional<WaitKind> kind;    // none: not suspended on anything (running, done, not started)
  std::string detail;              // one line: "Future pending, 1 callback", "asyncio.sleep(3600)", ...
  std::vector<uint64_t> waits_for;  // the tasks it waits for (awaited, gathered, a lock's holder)
  std::vector<uint64_t> awaited_by;  // the tasks that await it (await, gather, TaskGroup)
};

// The tasks as read, with their waits and the cycles among them.
struct TaskForest {
  cpython::AsyncioTasks tasks;
  std::vector<TaskWait> waits;  // parallel to tasks.tasks
  // Tasks waiting for each other in a ring, by address, each from its lowest address.
  std::vector<std::vector<uint64_t>> cycles;

  const TaskWait& wait_of(const cpython::AsyncTask& task) const {
    return waits[static_cast<size_t>(&task - tasks.tasks.data())];
  }
};

TaskForest diagnose_tasks(cpython::AsyncioTasks tasks);

// The loops whose running task blocks or busies its thread: a running task on a thread that the
// threads' diagnosis finds blocked (not in the GIL, not unknown) or running Python.
std::vector<BlockedLoop> find_blocked_loops(const TaskForest& forest, const cpython::ProcessStacks& stacks,
                                            const ProcessDiagnosis& diagnosis);

}  // namespace hangpy::diagnosis
