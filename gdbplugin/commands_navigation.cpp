// py-up and py-down: move the selected Python frame of the selected thread, one Python frame at
// a time, and print it like libpython.py does ("#N Frame 0x..., for file ..." and its source).
// The selection is hangpy's own (one per thread, until the process runs again); gdb's selected
// native frame does not move.
#include <fmt/format.h>

#include "gdbplugin/commands.h"
#include "gdbplugin/frame_summary.h"
#include "gdbplugin/python_error.h"
#include "gdbplugin/selected_frame.h"

namespace hangpy::gdbplugin {
namespace {

void move(std::string_view argument, bool older) {
  if (argument.find_first_not_of(" \t") != std::string_view::npos)
    throw UserError(fmt::format("{} takes no arguments", older ? "py-up" : "py-down"));
  auto selected = selected_python_frame();
  if (!selected) return;
  const auto& frames = selected->context.thread->frames;
  if (older ? selected->index + 1 >= frames.size() : selected->index == 0) {
    gdb_write(older ? "Unable to find an older python frame\n"
                    : "Unable to find a newer python frame\n");
    return;
  }
  size_t index = older ? selected->index + 1 : selected->index - 1;
  Session& session = Session::instance();
  session.select_frame(selected->context.lwp, index);
  cpython::VariableReader variables = variable_reader(*selected->context.analysis);
  gdb_write(fmt::format("#{} {}\n{}", index, frame_summary(frames[index], variables),
                        source_line(frames[index], session.sources())));
}

void py_up(std::string_view argument) { move(argument, true); }
void py_down(std::string_view argument) { move(argument, false); }

}  // namespace

std::vector<CommandSpec> navigation_commands() {
  return {
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
}

}  // namespace hangpy::gdbplugin
