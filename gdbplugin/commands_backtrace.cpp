// py-bt and py-bt-full: the selected thread's Python stack, most recent call first (libpython's
// order). py-bt's text comes from the formatter coreanalyze uses (report/stack_report.h).
#include <fmt/format.h>

#include "gdbplugin/command_arguments.h"
#include "gdbplugin/commands.h"
#include "gdbplugin/frame_summary.h"
#include "gdbplugin/gdb_frames.h"
#include "gdbplugin/python_error.h"
#include "gdbplugin/python_stops.h"
#include "gdbplugin/selected_frame.h"
#include "report/stack_report.h"

namespace hangpy::gdbplugin {
namespace {

void py_bt(std::string_view argument) {
  refuse_arguments("py-bt", argument);
  Session& session = Session::instance();
  ThreadContext context = session.current_thread();
  if (!context.thread || (context.thread->frames.empty() && !context.thread->error)) {
    gdb_write(no_python_frames_line(context));
    return;
  }
  report::TextStyle style;
  style.most_recent_first = true;
  style.qualified_names = false;  // libpython.py's py-bt prints co_name: scripts grep for it
  style.carets = false;            // and no caret lines: the output reads line for line the same
  style.fold_recursion = false;    // and every frame of a recursion
  // What each eval-loop call is calling in C, as libpython prints it; from gdb's frames, which
  // only the selected thread (the one `thread apply` is at) has.
  auto calls = call_texts(selected_thread_calls(context));
  gdb_write(report::format_traceback(*context.thread, &session.sources(), style, calls));
}

void py_bt_full(std::string_view argument) {
  refuse_arguments("py-bt-full", argument);
  Session& session = Session::instance();
  ThreadContext context = session.current_thread();
  if (!context.thread || (context.thread->frames.empty() && !context.thread->error)) {
    gdb_write(no_python_frames_line(context));
    return;
  }
  const std::vector<PythonStop> stops = python_stops(context);
  for (const PythonStop& stop : stops) {
    // One write per stop: a long stack shows while it is read, and stops at a pager "q".
    gdb_write(format_stop(stop, context));
    if (PyErr_CheckSignals() != 0) throw PythonErrorSet();
  }
  if (context.thread->error)
    gdb_write(fmt::format("#{} <frames end here: {}>\n", stops.empty() ? 0 : stops.back().number + 1,
                          context.thread->error->describe()));
}

const CommandList kCommands{
    {"py-bt", "COMMAND_STACK",
     "Print the Python stack of the selected thread, most recent call first.\n"
     "Usage: py-bt\n"
     "Shows `File \"...\", line N, in NAME` and the source line for each Python frame, like\n"
     "CPython's libpython.py, read without Python debug info. Works in `thread apply all`.",
     py_bt},
    {"py-bt-full", "COMMAND_STACK",
     "Print the Python stack of the selected thread with each frame's local variables.\n"
     "Usage: py-bt-full\n"
     "One `#N Frame 0x..., for file F, line L, in NAME (locals)` line and the source line per\n"
     "Python frame, most recent call first, and a `#N <built-in method ...>` line per C call\n"
     "py-bt names; N is the gdb frame's number, as in libpython.py.",
     py_bt_full},
};

}  // namespace
}  // namespace hangpy::gdbplugin
