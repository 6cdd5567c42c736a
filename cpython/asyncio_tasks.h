// asyncio's tasks (issue 12): every task of every event loop, the coroutine chain it is suspended
// in and the objects it awaits. A hung asyncio service shows one idle thread; the stuck work is in
// tasks no thread runs, which only their objects tell. Read from the registries asyncio keeps
// (asyncio.tasks' task sets; from 3.14 the per-thread task lists of the C module), with the layout
// table's asyncio fields, through the same frame decoder as thread stacks. What the waits mean,
// who waits for whom and the cycles among them is the diagnosis's (diagnosis/task_waits.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cpython/stacks.h"
#include "cpython/target.h"

namespace hangpy::cpython {

enum class TaskState { kPending, kRunning, kDone, kCancelled };
std::string_view task_state_name(TaskState state);  // "pending", "running", "done", "cancelled"

// Where a suspended task's innermost coroutine waits, when it is asyncio's own code: what the
// reader looks at more closely there.
enum class AwaitSite {
  kElsewhere,
  kSleep,       // asyncio.sleep
  kLocks,       // asyncio/locks.py: Lock, Event, Condition, Semaphore
  kQueues,      // asyncio/queues.py
  kTaskGroup,   // asyncio/taskgroups.py: the end of an `async with TaskGroup()`
};

// What a suspended task awaits, as its objects say. What that means (which kind of wait, on which
// tasks, in which cycle) is the diagnosis's: diagnosis/task_waits.h.
struct Awaited {
  uint64_t object = 0;         // the Future or Task fut_waiter (or the end of the await chain) names
  std::string type;            // its type name
  bool is_task = false;
  std::string task_name;       // when it is a task: its name ("Task at 0x..." when it has none)
  size_t callbacks = 0;        // how many callbacks it has: who else waits for it
  AwaitSite site = AwaitSite::kElsewhere;
  std::string site_function;   // the innermost coroutine's function (kLocks, kQueues)
  std::string self_type;       // the type of its `self` (kLocks, kQueues): "Lock", "Queue", ...
  std::vector<uint64_t> member_tasks;  // a gather's children, a TaskGroup's tasks
  // asyncio.Lock records no owner: the tasks whose coroutine frames hold the lock on their value
  // stack (`async with lock:` keeps lock.__aexit__ there until the block ends).
  std::vector<uint64_t> lock_holders;
  std::optional<std::string> sleep_delay;  // asyncio.sleep: the repr of its delay
  std::optional<double> sleep_due_in;      // seconds left (live processes)
  // loop.run_in_executor: chained to a concurrent.futures.Future, which this thread runs.
  bool executor = false;
  std::optional<uint64_t> executor_thread;
  std::optional<std::string> executor_thread_name;
};

struct AsyncTask {
  uint64_t address = 0;
  std::string name;  // "Task-3" or the name given; 3.7 has none: "Task at 0x..."
  TaskState state = TaskState::kPending;
  std::optional<uint64_t> thread_id;  // the thread running it (state kRunning), where found
  std::vector<PythonFrame> coroutine_stack;  // innermost first
  std::optional<Awaited> awaited;            // a suspended task's
  // The tasks whose TaskGroup this task belongs to (the group's _on_task_done is among the
  // task's callbacks): they await it from the moment it exists.
  std::vector<uint64_t> group_parents;
  std::optional<Error> error;        // why the chain or the state could not be read in full
};

struct AsyncioTasks {
  bool imported = false;  // asyncio.tasks is in some interpreter's sys.modules
  // Why the tasks were not read although asyncio is imported: the layout table has no asyncio
  // fields for this version (2.7, 3.6, the free-threaded builds).
  std::optional<std::string> unsupported;
  size_t total = 0;       // tasks found (tasks.size() unless the cap cut the list)
  std::vector<AsyncTask> tasks;  // by name
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
