#include "gdbplugin/analysis_cache.h"

#include <sys/stat.h>

#include "analysis/process_analysis.h"

#include <chrono>

#include <fmt/format.h>

#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

// What the user does in gdb when the binaries are missing (coreanalyze names its own options).
constexpr const char* kMissingBinariesRemedy =
    "in gdb: `file EXECUTABLE` for the program, `set sysroot DIR` or `set solib-search-path "
    "DIR` for its libraries";

// As coreanalyze's --max-tasks default: past it the tasks are counted, not read (each read is a
// call into gdb; Ctrl-C stops a long one anyway).
constexpr size_t kMaxTasksRead = 10000;

}  // namespace

const cpython::PythonThread* Analysis::thread_for_lwp(int64_t lwp) const {
  if (!stacks) return nullptr;
  for (const cpython::PythonThread& thread : stacks->threads) {
    if (thread.native_thread_id && static_cast<int64_t>(*thread.native_thread_id) == lwp)
      return &thread;
  }
  return nullptr;
}

Session& Session::instance() {
  // Never destroyed: a cached analysis holds Python objects, and gdb finalizes Python before the
  // process's static destructors run, so releasing them then aborts gdb ("PyThreadState_Get: the
  // GIL is released"). That happened when no event had emptied the cache before gdb exited (an
  // import that failed halfway, before the events were connected).
  static Session* session = new Session;
  return *session;
}

void Session::invalidate() {
  analysis_.reset();
  tasks_.reset();
  selected_stops_.clear();
  sources_ = report::FileSourceReader();  // files may have changed while the process ran
}

const Analysis& Session::analysis() {
  InferiorId inferior = selected_inferior_id();
  if (analysis_ && !(inferior == analyzed_inferior_)) invalidate();
  if (!analysis_) {
    Analysis fresh;
    fresh.target = std::make_unique<GdbTarget>();
    // The stacks alone: the commands read the rest as they need it (py-deadlock's diagnosis,
    // py-tasks' tasks), each once a stop.
    analysis::Request request;
    request.analyze.missing_binaries_remedy = kMissingBinariesRemedy;
    request.stacks_only = true;
    fresh.stacks = std::move(analysis::analyse_process(*fresh.target, request).stacks);
    ++analyses_run_;
    if (fresh.target->gdb_memory().interrupted()) {
      // A walk cut short by Ctrl-C is not the process's state: keep nothing, report the Quit.
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw PythonErrorSet();
    }
    const std::vector<std::string>& target_warnings = fresh.target->warnings();
    if (fresh.stacks) {
      fresh.stacks->warnings.insert(fresh.stacks->warnings.begin(), target_warnings.begin(),
                                    target_warnings.end());
    }
    // Source lines follow the process's own permissions: a live process's owner is that of
    // /proc/PID; a core's is unknown to gdb (then only what anyone may read is quoted when gdb
    // runs as root).
    report::SourcePolicy policy;
    if (selected_inferior_is_local_process()) {
      struct stat owner {};
      if (::stat(fmt::format("/proc/{}", inferior.pid).c_str(), &owner) == 0) {
        policy.uid = owner.st_uid;
        policy.gid = owner.st_gid;
      }
    }
    sources_ = report::FileSourceReader(policy);
    analysis_ = std::move(fresh);
    analyzed_inferior_ = inferior;
  }
  if (!analysis_->stacks) {
    // One line: the reason, with the first problem that may explain it (as coreanalyze says it).
    const std::vector<std::string>& target_warnings = analysis_->target->warnings();
    std::string because = target_warnings.empty() ? "" : "; " + target_warnings.front();
    throw UserError("hangpy: " + analysis_->stacks.error().describe() + because);
  }
  return *analysis_;
}

const diagnosis::TaskForest& Session::asyncio_tasks() {
  const Analysis& current = analysis();
  if (!tasks_) {
    cpython::AsyncioOptions options;
    options.max_tasks = kMaxTasksRead;
    // loop.time() is time.monotonic(), one clock for the whole machine: a live process's sleeps
    // say how long they have left. A core does not record when it was taken.
    if (selected_inferior_is_local_process()) {
      options.monotonic_now = std::chrono::duration<double>(
          std::chrono::steady_clock::now().time_since_epoch()).count();
    }
    diagnosis::TaskForest tasks = analysis::read_tasks(*current.target, *current.stacks, options);
    if (current.target->gdb_memory().interrupted()) {
      // The memory now fails every read: nothing of this stop can be trusted or reused.
      invalidate();
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw PythonErrorSet();
    }
    tasks_ = std::move(tasks);
  }
  return *tasks_;
}

ThreadContext Session::current_thread() {
  std::optional<int64_t> lwp = selected_thread_lwp();
  if (!lwp) throw UserError("hangpy: no thread selected (no process or core)");
  const Analysis& current = analysis();
  return ThreadContext{&current, *lwp, current.thread_for_lwp(*lwp)};
}

const cpython::FunctionRanges& Analysis::function_ranges() const {
  if (!function_ranges_)
    function_ranges_ = std::make_unique<cpython::FunctionRanges>(target->memory(), target->modules());
  return *function_ranges_;
}

std::optional<Session::SelectedStop> Session::selected_stop(int64_t lwp) const {
  auto found = selected_stops_.find(lwp);
  if (found == selected_stops_.end()) return std::nullopt;
  return found->second;
}

}  // namespace hangpy::gdbplugin
