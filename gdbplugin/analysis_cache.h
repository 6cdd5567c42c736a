// One analysis per gdb stop. The engine walks every thread at once, so `thread apply all py-bt`
// walks the process once, not once per thread; gdb events (stop, continue, new objfile, memory
// or register writes, inferior changes) throw the analysis away. Also holds what the commands
// remember between calls: the selected Python frame of each thread (py-up/py-down), which is
// reset with the analysis because frames change when the process runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include "cpython/analyzer.h"
#include "cpython/asyncio_tasks.h"
#include "diagnosis/task_waits.h"
#include "gdbplugin/gdb_api.h"
#include "gdbplugin/gdb_target.h"
#include "report/source_reader.h"

namespace hangpy::gdbplugin {

struct Analysis {
  std::unique_ptr<GdbTarget> target;
  Expected<cpython::ProcessStacks> stacks = make_error(ErrorKind::kNotFound, "not analyzed");

  // The Python thread running on this LWP; null when none does.
  const cpython::PythonThread* thread_for_lwp(int64_t lwp) const;
};

// What a command works on: gdb's selected thread and, when it runs Python, its Python thread.
struct ThreadContext {
  const Analysis* analysis = nullptr;
  int64_t lwp = 0;
  const cpython::PythonThread* thread = nullptr;  // null: no Python in this thread
};

class Session {
 public:
  static Session& instance();

  // The analysis of the selected inferior at this stop, made on first use. Throws UserError when
  // there is no process or no interpreter in it, PythonErrorSet (KeyboardInterrupt) on Ctrl-C.
  const Analysis& analysis();
  // asyncio's tasks at this stop (py-tasks), read on first use and kept with the analysis.
  // Throws as analysis() does; a Ctrl-C during the read throws the analysis away too (its
  // memory then refuses every read).
  const diagnosis::TaskForest& asyncio_tasks();
  // The selected thread and its Python thread. Throws UserError when gdb has no thread.
  ThreadContext current_thread();

  void invalidate();
  // Index of the selected Python frame of a thread, 0 = innermost.
  size_t selected_frame(int64_t lwp) const;
  // False until py-up or py-down selected one in this thread since the stop: gdb's own frame is
  // then below every Python frame (a breakpoint in C), and the first py-up selects the innermost
  // Python frame rather than its caller, as libpython.py does.
  bool has_selected_frame(int64_t lwp) const { return selected_frames_.contains(lwp); }
  void select_frame(int64_t lwp, size_t index) { selected_frames_[lwp] = index; }

  report::FileSourceReader& sources() { return sources_; }
  // How many analyses ran (py-threads shows it; tests check that the cache is used).
  uint64_t analyses_run() const { return analyses_run_; }

 private:
  std::optional<Analysis> analysis_;
  std::optional<diagnosis::TaskForest> tasks_;  // of analysis_, once read
  InferiorId analyzed_inferior_;
  std::map<int64_t, size_t> selected_frames_;
  report::FileSourceReader sources_;
  uint64_t analyses_run_ = 0;
};

}  // namespace hangpy::gdbplugin
