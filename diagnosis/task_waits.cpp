#include "diagnosis/task_waits.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "base/wait_graph.h"

namespace hangpy::diagnosis {
namespace {

using cpython::AsyncTask;
using cpython::Awaited;
using cpython::AwaitSite;

std::string future_pending(const Awaited& awaited) {
  return fmt::format("Future pending, {} callback{}", awaited.callbacks, awaited.callbacks == 1 ? "" : "s");
}

// The kind of wait at asyncio/locks.py, by the type of the primitive.
TaskWait lock_wait(const Awaited& awaited) {
  const std::string& type = awaited.self_type;
  if (type == "Lock") return {WaitKind::kLock, "asyncio.Lock", awaited.lock_holders, {}};
  if (type == "Event") return {WaitKind::kEvent, "asyncio.Event", {}, {}};
  if (type == "Condition") return {WaitKind::kCondition, "asyncio.Condition", {}, {}};
  if (type == "Semaphore" || type == "BoundedSemaphore")
    return {WaitKind::kSemaphore, "asyncio." + type, {}, {}};
  return {WaitKind::kOther,
          fmt::format("{} in asyncio/locks.py {}", future_pending(awaited), awaited.site_function), {}, {}};
}

// What the task waits for, from what it awaits.
TaskWait classify(const Awaited& awaited) {
  if (awaited.is_task) return {WaitKind::kTask, awaited.task_name, {awaited.object}, {}};
  if (awaited.type == "_GatheringFuture") {
    return {WaitKind::kGather, fmt::format("gather of {} tasks", awaited.member_tasks.size()),
            awaited.member_tasks, {}};
  }
  switch (awaited.site) {
    case AwaitSite::kSleep: {
      std::string detail = awaited.sleep_delay ? fmt::format("asyncio.sleep({})", *awaited.sleep_delay)
                                               : std::string("asyncio.sleep");
      if (awaited.sleep_due_in) detail += fmt::format(", due in {:.0f} s", *awaited.sleep_due_in);
      return {WaitKind::kSleep, detail, {}, {}};
    }
    case AwaitSite::kLocks:
      return lock_wait(awaited);
    case AwaitSite::kQueues:
      return {WaitKind::kQueue,
              fmt::format("asyncio.{}.{}", awaited.self_type.empty() ? "Queue" : awaited.self_type,
                          awaited.site_function), {}, {}};
    case AwaitSite::kTaskGroup:
      return {WaitKind::kTaskGroup, fmt::format("TaskGroup of {} tasks", awaited.member_tasks.size()),
              awaited.member_tasks, {}};
    case AwaitSite::kElsewhere:
      break;
  }
  if (awaited.executor) {
    std::string detail = "run_in_executor";
    if (awaited.executor_thread) {
      detail = awaited.executor_thread_name
                   ? fmt::format("run_in_executor, in thread {} \"{}\"", *awaited.executor_thread,
                                 *awaited.executor_thread_name)
                   : fmt::format("run_in_executor, in thread {}", *awaited.executor_thread);
    }
    return {WaitKind::kExecutor, detail, {}, {}};
  }
  if (awaited.type == "_asyncio.Future") return {WaitKind::kFuture, future_pending(awaited), {}, {}};
  return {WaitKind::kOther, fmt::format("{} ({})", future_pending(awaited), awaited.type), {}, {}};
}

void add_once(std::vector<uint64_t>& list, uint64_t value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

}  // namespace

TaskForest diagnose_tasks(cpython::AsyncioTasks tasks) {
  TaskForest forest;
  forest.tasks = std::move(tasks);
  const std::vector<AsyncTask>& list = forest.tasks.tasks;
  std::unordered_map<uint64_t, size_t> index_of;
  for (size_t i = 0; i < list.size(); ++i) index_of[list[i].address] = i;
  auto name_of = [&](uint64_t address) -> const std::string* {
    auto found = index_of.find(address);
    return found == index_of.end() ? nullptr : &list[found->second].name;
  };

  forest.waits.resize(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].awaited) continue;
    TaskWait wait = classify(*list[i].awaited);
    // A task is named as it is listed (before 3.8 names come from its coroutine).
    if (wait.kind == WaitKind::kTask)
      if (const std::string* name = name_of(wait.waits_for.front())) wait.detail = *name;
    if (wait.kind == WaitKind::kLock && !wait.waits_for.empty())
      if (const std::string* name = name_of(wait.waits_for.back()))
        wait.detail = fmt::format("asyncio.Lock held by {}", *name);
    forest.waits[i] = std::move(wait);
  }

  // Awaited by: the inverse of the waits, except a lock's (waiting for a holder is no await of
  // it), and a TaskGroup's parent from the moment a child exists.
  for (size_t i = 0; i < list.size(); ++i) {
    if (forest.waits[i].kind == WaitKind::kLock) continue;
    for (uint64_t child : forest.waits[i].waits_for)
      if (auto found = index_of.find(child); found != index_of.end())
        add_once(forest.waits[found->second].awaited_by, list[i].address);
  }
  for (size_t i = 0; i < list.size(); ++i)
    for (uint64_t parent : list[i].group_parents)
      if (parent != list[i].address) add_once(forest.waits[i].awaited_by, parent);

  // The cycles, over nodes numbered in address order so that each starts at its lowest address.
  std::vector<size_t> by_address(list.size());
  std::iota(by_address.begin(), by_address.end(), size_t{0});
  std::sort(by_address.begin(), by_address.end(),
            [&](size_t a, size_t b) { return list[a].address < list[b].address; });
  std::vector<size_t> node_of(list.size());
  for (size_t node = 0; node < by_address.size(); ++node) node_of[by_address[node]] = node;
  std::vector<std::vector<size_t>> edges(list.size());
  for (size_t i = 0; i < list.size(); ++i)
    for (uint64_t other : forest.waits[i].waits_for)
      if (auto found = index_of.find(other); found != index_of.end())
        edges[node_of[i]].push_back(node_of[found->second]);
  for (const std::vector<size_t>& cycle : find_wait_cycles(edges)) {
    std::vector<uint64_t> ring;
    for (size_t node : cycle) ring.push_back(list[by_address[node]].address);
    forest.cycles.push_back(std::move(ring));
  }
  return forest;
}

std::vector<BlockedLoop> find_blocked_loops(const TaskForest& forest, const cpython::ProcessStacks& stacks,
                                            const ProcessDiagnosis& diagnosis) {
  std::vector<BlockedLoop> found;
  for (const AsyncTask& task : forest.tasks.tasks) {
    if (task.state != cpython::TaskState::kRunning || !task.thread_id) continue;
    for (size_t i = 0; i < stacks.threads.size() && i < diagnosis.threads.size(); ++i) {
      const cpython::PythonThread& thread = stacks.threads[i];
      if (thread.thread_id != *task.thread_id || thread.frames.empty()) continue;
      const BlockedOn& blocked = diagnosis.threads[i].blocked_on;
      // Waiting for the GIL is no call of the task's; unknown says nothing.
      if (blocked.kind == WaitKind::kGil || blocked.kind == WaitKind::kUnknown) break;
      const cpython::PythonFrame& innermost = thread.frames.front();
      const std::string where = describe_call(innermost, innermost);
      const std::string doing =
          blocked.kind == WaitKind::kRunning
              ? fmt::format("keeps it busy in {} without awaiting; no other task of its loop runs until it awaits", where)
              : fmt::format("blocks it on {} in {} (a blocking call inside a coroutine); no other task of its loop "
                            "runs until it returns",
                            blocked.what, where);
      found.push_back({i, task.name,
                       fmt::format("blocked event loop: task \"{}\" runs on {} and {}", task.name, thread_label(thread), doing)});
      break;
    }
  }
  return found;
}

}  // namespace hangpy::diagnosis
