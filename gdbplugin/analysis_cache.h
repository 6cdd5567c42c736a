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
#include "cpython/function_ranges.h"
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
  // The bounds of the target's C functions (the built-in calls py-bt names), made on first use.
  const cpython::FunctionRanges& function_ranges() const;

 private:
  mutable std::unique_ptr<cpython::FunctionRanges> function_ranges_;
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
  // The selected stop of a thread (gdbplugin/python_stops.h: a Python frame or a C call's line
  // libpython prints; 0 = innermost), and the Python frame it is (none for a C call's line).
  // None until py-up or py-down selected one in this thread since the stop: gdb's own frame is
  // then below every Python frame (a breakpoint in C), and the first py-up selects the innermost
  // Python frame rather than its caller, as libpython.py does.
  struct SelectedStop {
    size_t stop = 0;
    std::optional<size_t> python_frame{};
    // At a C call's line: the Python frame that made the call (the next older one), whose
    // variables py-locals and py-print show there.
    std::optional<size_t> calling_frame{};
  };
  std::optional<SelectedStop> selected_stop(int64_t lwp) const;
  void select_stop(int64_t lwp, SelectedStop stop) { selected_stops_[lwp] = stop; }

  report::FileSourceReader& sources() { return sources_; }
  // How many analyses ran (py-threads shows it; tests check that the cache is used).
  uint64_t analyses_run() const { return analyses_run_; }

 private:
  std::optional<Analysis> analysis_;
  std::optional<diagnosis::TaskForest> tasks_;  // of analysis_, once read
  InferiorId analyzed_inferior_;
  std::map<int64_t, SelectedStop> selected_stops_;
  report::FileSourceReader sources_;
  uint64_t analyses_run_ = 0;
};

}  // namespace hangpy::gdbplugin
