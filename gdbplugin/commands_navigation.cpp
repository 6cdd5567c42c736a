// py-up and py-down: move the selected Python frame of the selected thread, one Python frame at
// a time, and print it like libpython.py does ("#N Frame 0x..., for file ..." and its source).
// The selection is hangpy's own (one per thread, until the process runs again); gdb's selected
// native frame does not move.
#include <fmt/format.h>

#include "gdbplugin/command_arguments.h"
#include "gdbplugin/commands.h"
#include "gdbplugin/frame_summary.h"
#include "gdbplugin/python_error.h"
#include "gdbplugin/selected_frame.h"

namespace hangpy::gdbplugin {
namespace {

void move(std::string_view argument, bool older) {
  refuse_arguments(older ? "py-up" : "py-down", argument);
  auto selected = selected_python_frame();
  if (!selected) return;
  const auto& frames = selected->context.thread->frames;
  Session& session = Session::instance();
  // Nothing selected yet: gdb's frame is inside the innermost Python frame's C callees, so the
  // innermost Python frame is the older one and there is no newer one.
  const bool below_python = !session.has_selected_frame(selected->context.lwp);
  if (older ? !below_python && selected->index + 1 >= frames.size()
            : below_python || selected->index == 0) {
    gdb_write(older ? "Unable to find an older python frame\n"
                    : "Unable to find a newer python frame\n");
    return;
  }
  size_t index = below_python ? 0 : older ? selected->index + 1 : selected->index - 1;
  session.select_frame(selected->context.lwp, index);
  cpython::VariableReader variables = variable_reader(*selected->context.analysis);
  gdb_write(fmt::format("#{} {}\n{}", index, frame_summary(frames[index], variables),
                        source_line(frames[index], session.sources())));
}

void py_up(std::string_view argument) { move(argument, true); }
void py_down(std::string_view argument) { move(argument, false); }

const CommandList kCommands{
    {"py-up", "COMMAND_STACK",
     "Select and print the Python frame that called the selected one.\n"
     "Usage: py-up\n"
     "py-list, py-locals and py-print then work on that frame. The selection is kept per\n"
     "thread until the process runs again.",
     py_up},
    {"py-down", "COMMAND_STACK",
     "Select and print the Python frame that the selected one called.\n"
     "Usage: py-down\n"
     "py-list, py-locals and py-print then work on that frame. The selection is kept per\n"
     "thread until the process runs again.",
     py_down},
};

}  // namespace
}  // namespace hangpy::gdbplugin
