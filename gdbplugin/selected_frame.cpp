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

std::optional<SelectedFrame> selected_python_frame() {
  Session& session = Session::instance();
  ThreadContext context = session.current_thread();
  if (!context.thread || context.thread->frames.empty()) {
    gdb_write(no_python_frames_line(context));
    return std::nullopt;
  }
  size_t index = session.selected_frame(context.lwp);
  if (index >= context.thread->frames.size()) index = 0;
  return SelectedFrame{context, index, &context.thread->frames[index]};
}

cpython::VariableReader variable_reader(const Analysis& analysis) {
  // libpython.py's reprs: an object met again anywhere in one repr is elided (object_repr.h).
  return cpython::VariableReader(analysis.target->memory(), *analysis.stacks->layout,
                                 cpython::RepeatedObjects::kLibpython);
}

}  // namespace hangpy::gdbplugin
