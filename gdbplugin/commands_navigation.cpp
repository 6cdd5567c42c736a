// py-up and py-down: move the selected Python frame of the selected thread and print it like
// libpython.py does ("#N Frame 0x..., for file ..." and its source). They stop at each Python
// frame and at each C call libpython prints a line for ("#N <built-in method ...>"; see
// gdbplugin/python_stops.h). The selection is hangpy's own (one per thread, until the process
// runs again); gdb's selected native frame does not move.
#include <fmt/format.h>

#include "gdbplugin/command_arguments.h"
#include "gdbplugin/commands.h"
#include "gdbplugin/python_error.h"
#include "gdbplugin/python_stops.h"
#include "gdbplugin/selected_frame.h"

namespace hangpy::gdbplugin {
namespace {

void move(std::string_view argument, bool older) {
  refuse_arguments(older ? "py-up" : "py-down", argument);
  Session& session = Session::instance();
  ThreadContext context = session.current_thread();
  if (!context.thread || context.thread->frames.empty()) {
    gdb_write(no_python_frames_line(context));
    return;
  }
  const std::vector<PythonStop> stops = python_stops(context);
  // Nothing selected yet: gdb's frame is inside the innermost Python frame's C callees, at the
  // innermost C call's line where there is one (libpython starts from that frame).
  std::optional<size_t> current = starting_stop(stops);
  if (auto selected = session.selected_stop(context.lwp)) current = selected->stop;
  const bool found = older ? (current ? *current + 1 < stops.size() : !stops.empty())
                           : current && *current > 0 && *current - 1 < stops.size();
  if (!found) {
    gdb_write(older ? "Unable to find an older python frame\n"
                    : "Unable to find a newer python frame\n");
    return;
  }
  const size_t index = older ? (current ? *current + 1 : 0) : *current - 1;
  std::optional<size_t> calling_frame;
  for (size_t older_stop = index + 1; !stops[index].python_frame && older_stop < stops.size(); ++older_stop) {
    if (stops[older_stop].python_frame) {
      calling_frame = stops[older_stop].python_frame;
      break;
    }
  }
  session.select_stop(context.lwp, {index, stops[index].python_frame, calling_frame});
  gdb_write(format_stop(stops[index], context));
}

void py_up(std::string_view argument) { move(argument, true); }
void py_down(std::string_view argument) { move(argument, false); }

const CommandList kCommands{
    {"py-up", "COMMAND_STACK",
     "Select and print the Python frame that called the selected one.\n"
     "Usage: py-up\n"
     "py-list, py-locals and py-print then work on that frame. It also stops at the C calls\n"
     "py-bt prints a line for (\"<built-in method ...>\"), as libpython.py's does; there\n"
     "py-locals and py-print show the variables of the Python frame that made the call. The\n"
     "selection is kept per thread until the process runs again.",
     py_up},
    {"py-down", "COMMAND_STACK",
     "Select and print the Python frame that the selected one called.\n"
     "Usage: py-down\n"
     "py-list, py-locals and py-print then work on that frame. It also stops at the C calls\n"
     "py-bt prints a line for (\"<built-in method ...>\"), as libpython.py's does; there\n"
     "py-locals and py-print show the variables of the Python frame that made the call. The\n"
     "selection is kept per thread until the process runs again.",
     py_down},
};

}  // namespace
}  // namespace hangpy::gdbplugin
