// The one formatter of Python stacks, for coreanalyze and the gdb extension alike, so both print
// the same text for the same process. Pure string building; the caller decides where it goes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cpython/stacks.h"
#include "diagnosis/diagnosis.h"
#include "report/source_reader.h"

namespace hangpy::report {

struct TextStyle {
  bool color = false;
  bool most_recent_first = false;  // libpython's py-bt order; tracebacks put it last
  bool qualified_names = true;     // Cls.method (co_qualname); libpython prints co_name
  int context_lines = 0;           // source lines before and after each frame's (--context)
  bool carets = true;              // the caret line under the running expression (3.11 on)
  // Recursion folded as Python's tracebacks fold it (repeated_frames.h); libpython's py-bt lists
  // every frame.
  bool fold_recursion = true;
  // Text printed under each frame's lines (coreanalyze --locals); none when empty.
  std::function<std::string(const cpython::PythonFrame&)> after_frame;
  // Text printed before frame N of an LWP's merged native stack (coreanalyze --native: the
  // built-in a Python frame is calling); none when empty.
  std::function<std::string(int64_t lwp, size_t frame_index)> before_merged_frame;
};

// "Traceback (most recent call last):" and one `File "...", line N, in name` pair per frame.
std::string format_traceback(const cpython::PythonThread& thread, SourceReader* sources,
                             const TextStyle& style);

// The same with lines naming what each eval-loop call (cpython::eval_loop_groups, innermost first)
// is calling in C, libpython's "<built-in method ...>", "Waiting for the GIL": `calls[k]` are
// printed just inside group k's innermost frame, innermost first.
std::string format_traceback(const cpython::PythonThread& thread, SourceReader* sources,
                             const TextStyle& style,
                             const std::vector<std::vector<std::string>>& calls);

// The thread's header line: thread id, LWP, name, GIL.
std::string format_thread_header(const cpython::PythonThread& thread, const TextStyle& style);

// "5 other threads run no Python: LWP 12, 13, ..." (one line), or nothing when there are none
// or it cannot be told.
// With `diagnosis`, one more line for each thread it knows the role of (diagnosis.native_roles).
std::string format_threads_without_python(const cpython::ProcessStacks& stacks,
                                          const diagnosis::ProcessDiagnosis* diagnosis = nullptr);

// Every thread: header, traceback, blank line; then the threads that run no Python. With a
// diagnosis: its deadlock lines first, and each thread's state and "blocked on" under its header.
std::string format_process(const cpython::ProcessStacks& stacks, SourceReader* sources,
                           const TextStyle& style,
                           const diagnosis::ProcessDiagnosis* diagnosis = nullptr);

}  // namespace hangpy::report
