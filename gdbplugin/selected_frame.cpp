#include "gdbplugin/selected_frame.h"

#include <fmt/format.h>

namespace hangpy::gdbplugin {

std::string no_python_frames_line(const ThreadContext& context) {
  if (!context.thread) {
    return fmt::format("No Python frames in this thread (LWP {} runs no Python thread state)\n",
                       context.lwp);
  }
  if (context.thread->error) {
    return fmt::format("No Python frames in this thread (LWP {}): {}\n", context.lwp,
                       context.thread->error->describe());
  }
  return fmt::format("No Python frames in this thread (LWP {})\n", context.lwp);
}

std::optional<SelectedFrame> selected_python_frame(AtCallLine at_call_line) {
  Session& session = Session::instance();
  ThreadContext context = session.current_thread();
  if (!context.thread || context.thread->frames.empty()) {
    gdb_write(no_python_frames_line(context));
    return std::nullopt;
  }
  size_t index = 0;
  if (auto selected = session.selected_stop(context.lwp)) {
    const std::optional<size_t> frame =
        selected->python_frame ? selected->python_frame
                               : at_call_line == AtCallLine::kCallingFrame ? selected->calling_frame : std::nullopt;
    if (!frame) {  // a C call's line: libpython has no Python frame there either
      gdb_write("Unable to read information on python frame\n");
      return std::nullopt;
    }
    index = *frame;
  }
  if (index >= context.thread->frames.size()) index = 0;
  return SelectedFrame{context, index, &context.thread->frames[index]};
}

cpython::VariableReader variable_reader(const Analysis& analysis) {
  // libpython.py's reprs: an object met again anywhere in one repr is elided (object_repr.h), and
  // a frame's variables are its plain locals (co_nlocals: no cells or free variables).
  return cpython::VariableReader(analysis.target->memory(), *analysis.stacks->layout,
                                 cpython::RepeatedObjects::kLibpython,
                                 cpython::SlotsShown::kPlainLocals);
}

}  // namespace hangpy::gdbplugin
