#include "triage/lost_tasks.h"

#include <array>
#include <string_view>

#include <fmt/format.h>

#include "triage/verdict.h"

namespace hangpy::triage {
namespace {

constexpr std::string_view kPoolFile = "multiprocessing/pool.py";

std::string_view unqualified(std::string_view function) {
  size_t dot = function.rfind('.');
  return dot == std::string_view::npos ? function : function.substr(dot + 1);
}

// A thread blocked waiting for a Pool's result: a frame of Pool's result API and, innermost, a
// wait on the Event (or its Condition and lock) the result handler sets.
bool waits_for_pool_result(const ThreadRecord& thread) {
  static constexpr std::array<std::string_view, 8> kResultCalls = {
      "map", "starmap", "apply", "get", "wait", "next", "__next__", "_map_async"};
  if (thread.idle || !thread.blocked_kind) return false;
  const std::string& kind = *thread.blocked_kind;
  if (kind != "event" && kind != "condition" && kind != "lock") return false;
  for (const Frame& frame : thread.python_frames) {
    if (!std::string_view(frame.file).ends_with(kPoolFile)) continue;
    for (std::string_view call : kResultCalls)
      if (unqualified(frame.function) == call) return true;
  }
  return false;
}

bool runs_pool_worker(const ProcessRecord& process) {
  for (const ThreadRecord& thread : process.threads)
    for (const Frame& frame : thread.python_frames)
      if (std::string_view(frame.file).ends_with(kPoolFile) && unqualified(frame.function) == "worker") return true;
  return false;
}

// Every thread with Python frames waits for work, and one does.
bool waits_for_work(const ProcessRecord& process) {
  bool some = false;
  for (const ThreadRecord& thread : process.threads) {
    if (thread.python_frames.empty()) continue;
    if (!thread.idle) return false;
    some = true;
  }
  return some;
}

}  // namespace

std::vector<LostPoolTask> find_lost_pool_tasks(const Triage& triage) {
  std::vector<LostPoolTask> found;
  for (size_t p = 0; p < triage.processes.size(); ++p) {
    const ProcessRecord& parent = triage.processes[p];
    if (!parent.labels.pid) continue;
    const ThreadRecord* waiter = nullptr;
    for (const ThreadRecord& thread : parent.threads)
      if (waits_for_pool_result(thread)) waiter = &thread;
    if (waiter == nullptr) continue;
    std::vector<int> workers;
    bool all_wait_for_work = true;
    for (size_t q = 0; q < triage.processes.size(); ++q) {
      const ProcessRecord& child = triage.processes[q];
      if (child.labels.ppid != parent.labels.pid || !runs_pool_worker(child)) continue;
      workers.push_back(static_cast<int>(q));
      if (!waits_for_work(child)) all_wait_for_work = false;
    }
    // Without its workers among the processes nothing is known of them: no claim.
    if (workers.empty() || !all_wait_for_work) continue;
    std::optional<Place> place = place_of(waiter->python_frames);
    if (!place) continue;
    found.push_back({static_cast<int>(p), *place, std::move(workers)});
  }
  return found;
}

std::string describe_lost_pool_task(const Triage& triage, const LostPoolTask& lost) {
  return fmt::format("a task of {} is lost: {} waits for its result, and every worker of its pool ({}) waits "
                     "for work",
                     format_place(lost.place), process_name(triage, lost.process),
                     describe_processes(triage, lost.workers));
}

}  // namespace hangpy::triage
