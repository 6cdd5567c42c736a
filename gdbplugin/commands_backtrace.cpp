// py-bt and py-bt-full: the selected thread's Python stack, most recent call first (libpython's
// order). py-bt's text comes from the formatter coreanalyze uses (report/stack_report.h).
#include <fmt/format.h>

#include "cpython/eval_groups.h"
#include "gdbplugin/command_arguments.h"
#include "gdbplugin/commands.h"
#include "gdbplugin/frame_summary.h"
#include "gdbplugin/gdb_frames.h"
#include "gdbplugin/python_error.h"
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
  // What each eval-loop call is calling in C, as libpython prints it; from gdb's frames, which
  // only the selected thread (the one `thread apply` is at) has.
  const cpython::Layout& layout = *context.analysis->stacks->layout;
  cpython::ObjectReader objects(context.analysis->target->memory(), layout);
  const size_t eval_loop_calls = cpython::eval_loop_groups(*context.thread).size();
  std::optional<GilWaitRange> gil_wait;
  const auto& stacks = *context.analysis->stacks;
  if (stacks.gil_address && layout.gil.wait_begin != cpython::kAbsent)
    gil_wait = GilWaitRange{*stacks.gil_address + static_cast<uint64_t>(layout.gil.wait_begin),
                            *stacks.gil_address + static_cast<uint64_t>(layout.gil.wait_end)};
  auto calls = call_lines(selected_thread_frames(layout.eval_loop_function, eval_loop_calls),
                          *context.thread, objects, layout.eval_loop_function, gil_wait);
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
  cpython::VariableReader variables = variable_reader(*context.analysis);
  const auto& frames = context.thread->frames;
  for (size_t i = 0; i < frames.size(); ++i) {
    // One write per frame: a long stack shows while it is read, and stops at a pager "q".
    gdb_write(fmt::format("#{} {}\n{}", i, frame_summary(frames[i], variables),
                          source_line(frames[i], session.sources())));
    if (PyErr_CheckSignals() != 0) throw PythonErrorSet();
  }
  if (context.thread->error)
    gdb_write(fmt::format("#{} <frames end here: {}>\n", frames.size(),
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
     "Python frame, #0 being the most recent call (the numbers py-up and py-down move by).",
     py_bt_full},
};

}  // namespace
}  // namespace hangpy::gdbplugin
