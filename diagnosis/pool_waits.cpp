#include "diagnosis/pool_waits.h"

#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "cpython/instance_attributes.h"
#include "cpython/frame_variables.h"

namespace hangpy::diagnosis::detail {
namespace {

constexpr std::string_view kThreadPoolFile = "concurrent/futures/thread.py";
constexpr std::string_view kFuturesFile = "concurrent/futures/_base.py";

bool in_file(const cpython::PythonFrame& frame, std::string_view suffix) {
  return std::string_view(frame.file).ends_with(suffix);
}

std::optional<uint64_t> object_local(const Context& context, const cpython::PythonFrame& frame, std::string_view name) {
  cpython::VariableReader variables(context.memory, context.layout);
  auto found = variables.lookup(frame, name, cpython::VariableReader::Want::kObjectOnly);
  if (!found || !*found || (*found)->scope != cpython::Scope::kLocal || (*found)->variable.object == 0)
    return std::nullopt;
  return (*found)->variable.object;
}

// The work queue of the executor whose worker loop the thread runs (innermost `_worker` frame).
std::optional<uint64_t> work_queue_of(const Context& context, const cpython::PythonThread& thread) {
  for (const cpython::PythonFrame& frame : thread.frames)
    if (frame.function == "_worker" && in_file(frame, kThreadPoolFile)) return object_local(context, frame, "work_queue");
  return std::nullopt;
}

struct FutureWait {
  size_t caller = 0;  // index of the frame that called Future.result (the user's place)
};

// The thread waits in Future.result (or .exception) for a Future whose state is PENDING.
std::optional<FutureWait> waits_for_unstarted_future(const Context& context, const cpython::PythonThread& thread) {
  for (size_t i = 0; i + 1 < thread.frames.size(); ++i) {
    const cpython::PythonFrame& frame = thread.frames[i];
    if (!in_file(frame, kFuturesFile) || (frame.function != "result" && frame.function != "exception")) continue;
    const uint64_t future = frame_self(context, frame);
    if (future == 0) return std::nullopt;
    cpython::InstanceAttributes attributes(context.objects);
    auto state = attributes.get(future, "_state");
    if (!state || *state == 0) return std::nullopt;
    auto text = context.objects.read_string(*state);
    if (!text || *text != "PENDING") return std::nullopt;
    return FutureWait{i + 1};
  }
  return std::nullopt;
}

constexpr std::string_view kProcessPoolFile = "multiprocessing/pool.py";
// The innermost frames a result's wait is looked for in: ApplyResult.get -> wait -> Event.wait ->
// Condition.wait (3 frames of threading in 2.7).
constexpr size_t kResultFramesLooked = 6;

}  // namespace

void name_result_wait(const Context& context, size_t index, ThreadDiagnosis& thread) {
  const WaitKind kind = thread.blocked_on.kind;
  if (kind != WaitKind::kEvent && kind != WaitKind::kCondition && kind != WaitKind::kLock &&
      kind != WaitKind::kSyscall && kind != WaitKind::kUnknown)
    return;
  const auto& frames = context.stacks.threads[index].frames;
  // The outermost frame of the library the wait is in: the call the program wrote (Pool.map,
  // Future.result); pool.py's own waits are ApplyResult.wait and .get.
  std::optional<size_t> inner;
  for (size_t i = 0; i < frames.size() && i < kResultFramesLooked; ++i) {
    const bool pool = in_file(frames[i], kProcessPoolFile) && (frames[i].function == "wait" || frames[i].function == "get");
    const bool future = in_file(frames[i], kFuturesFile) && (frames[i].function == "result" || frames[i].function == "exception");
    if (pool || future) {
      inner = i;
      break;
    }
  }
  if (!inner) return;
  const std::string_view file = in_file(frames[*inner], kProcessPoolFile) ? kProcessPoolFile : kFuturesFile;
  size_t outer = *inner;
  while (outer + 1 < frames.size() && in_file(frames[outer + 1], file)) ++outer;
  const cpython::PythonFrame& call = frames[outer];
  std::string name = call.qualname.empty() ? call.function : call.qualname;
  // Before 3.11 a code object knows no class: pool.py's calls are Pool's, or its results'.
  if (file == kProcessPoolFile && name.find('.') == std::string::npos)
    name = (name == "get" || name == "wait" ? "AsyncResult." : "Pool.") + name;
  BlockedOn& blocked = thread.blocked_on;
  // The result is what the program waits for; the primitive after it.
  const std::string primitive = blocked.what.empty() ? std::string() : " (" + blocked.what + ")";
  blocked.what = file == kProcessPoolFile ? fmt::format("the result of `{}`{}", name, primitive)
                                          : fmt::format("the result of a Future{}", primitive);
}

std::vector<WaitCycle> find_starved_pools(const Context& context, const ProcessDiagnosis& result) {
  const auto& threads = context.stacks.threads;
  std::map<uint64_t, std::vector<size_t>> workers;  // by work queue
  for (size_t i = 0; i < threads.size() && i < result.threads.size(); ++i) {
    auto queue = work_queue_of(context, threads[i]);
    if (!queue) continue;
    // A worker free to take work could start any Future still queued: then nothing starves.
    if (result.threads[i].idle) return {};
    workers[*queue].push_back(i);
  }
  std::vector<WaitCycle> cycles;
  for (const auto& [queue, members] : workers) {
    std::vector<std::string> places;  // each worker's "`Future.result` at app.py:22"
    for (size_t i : members) {
      const WaitKind kind = result.threads[i].blocked_on.kind;
      if (kind == WaitKind::kRunning || kind == WaitKind::kUnknown) break;
      auto wait = waits_for_unstarted_future(context, threads[i]);
      if (!wait) break;
      places.push_back(describe_call(threads[i].frames[wait->caller - 1], threads[i].frames[wait->caller]));
    }
    if (places.size() != members.size()) continue;
    WaitCycle cycle;
    cycle.threads = members;
    if (members.size() == 1) {
      cycle.text = fmt::format("deadlock: {}, the only worker of its ThreadPoolExecutor, waits in {} for a Future "
                               "that has not started; no worker is left to start it",
                               thread_label(threads[members.front()]), places.front());
    } else {
      std::vector<std::string> waits;
      for (size_t k = 0; k < members.size(); ++k)
        waits.push_back(fmt::format("{} in {}", thread_label(threads[members[k]]), places[k]));
      cycle.text = fmt::format("deadlock: all {} workers of a ThreadPoolExecutor wait for Futures that have not "
                               "started ({}); no worker is left to start them",
                               members.size(), fmt::join(waits, "; "));
    }
    cycles.push_back(std::move(cycle));
  }
  return cycles;
}

}  // namespace hangpy::diagnosis::detail
