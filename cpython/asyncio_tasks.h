// asyncio's tasks (issue 12): every task of every event loop, the coroutine chain it is suspended
// in, what it waits for and who waits for it. A hung asyncio service shows one idle thread; the
// stuck work is in tasks no thread runs, which only their objects tell. Read from the registries
// asyncio keeps (asyncio.tasks' task sets; from 3.14 the per-thread task lists of the C module),
// with the layout table's asyncio fields, through the same frame decoder as thread stacks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cpython/stacks.h"
#include "cpython/target.h"

namespace hangpy::cpython {

enum class TaskState { kPending, kRunning, kDone, kCancelled };

// What a task's innermost coroutine waits for, as far as its objects tell.
enum class AwaitKind {
  kNone,       // not suspended on anything (running, done, or not started)
  kTask,       // another task (awaited_tasks holds it)
  kFuture,     // a plain Future
  kGather,     // asyncio.gather's future (awaited_tasks: its children)
  kTaskGroup,  // a TaskGroup's end (awaited_tasks: its tasks)
  kSleep,      // asyncio.sleep
  kLock,       // asyncio.Lock (awaited_tasks: the task holding it, where one is found)
  kEvent,
  kCondition,
  kSemaphore,
  kQueue,
  kExecutor,   // loop.run_in_executor: a thread runs the function (executor_thread)
  kOther,      // something else: awaited_type names it
};

std::string_view await_kind_name(AwaitKind kind);  // "task", "future", "gather", ...
std::string_view task_state_name(TaskState state);  // "pending", "running", "done", "cancelled"

struct AsyncTask {
  uint64_t address = 0;
  std::string name;  // "Task-3" or the name given; 3.7 has none: "Task at 0x..."
  TaskState state = TaskState::kPending;
  std::optional<uint64_t> thread_id;  // the thread running it (state kRunning), where found
  std::vector<PythonFrame> coroutine_stack;  // innermost first
  AwaitKind awaits = AwaitKind::kNone;
  uint64_t awaited_object = 0;  // the Future (or Task) the task's fut_waiter names
  std::string awaited_type;     // its type name
  std::vector<uint64_t> awaited_tasks;
  std::optional<uint64_t> executor_thread;  // kExecutor: the thread running the function
  std::string detail;  // one line: "Future pending, 1 callback", "asyncio.sleep(3600)", ...
  std::vector<uint64_t> awaited_by;  // tasks waiting for this one (await, gather, TaskGroup)
  std::optional<Error> error;        // why the chain or the state could not be read in full
};

struct AsyncioTasks {
  bool imported = false;  // asyncio.tasks is in some interpreter's sys.modules
  // Why the tasks were not read although asyncio is imported: the layout table has no asyncio
  // fields for this version (2.7, 3.6, the free-threaded builds).
  std::optional<std::string> unsupported;
  size_t total = 0;       // tasks found (tasks.size() unless the cap cut the list)
  std::vector<AsyncTask> tasks;
  // Tasks waiting for each other in a ring (await, gather, lock held): each a deadlock.
  std::vector<std::vector<uint64_t>> cycles;
  std::vector<std::string> warnings;
  // Where the task lists' offsets came from: "compiled table", or (3.14 on) the _asyncio module's
  // own debug offsets, "section .AsyncioDebug".
  std::string offsets_source;
};

struct AsyncioOptions {
  size_t max_tasks = 100000;  // tasks read in full; the rest are counted
  // time.monotonic() of the moment the target was read (live processes): sleeps say how long is
  // left. A core does not record it.
  std::optional<double> monotonic_now;
};

// `stacks` is the analysis of the same target (its layout, threads and interpreters).
AsyncioTasks read_asyncio_tasks(const Target& target, const ProcessStacks& stacks,
                                const AsyncioOptions& options = {});

}  // namespace hangpy::cpython
