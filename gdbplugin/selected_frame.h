// What the frame-level commands (py-list, py-locals, py-print, py-up, py-down) work on: the
// selected Python frame of gdb's selected thread.
#pragma once

#include <optional>
#include <string>

#include "cpython/frame_variables.h"
#include "gdbplugin/analysis_cache.h"

namespace hangpy::gdbplugin {

struct SelectedFrame {
  ThreadContext context;
  size_t index = 0;  // 0 = innermost
  const cpython::PythonFrame* frame = nullptr;
};

// The one line a command prints in a thread that runs no Python code (or whose frames could not
// be read), so that `thread apply all <command>` goes on with the next thread.
std::string no_python_frames_line(const ThreadContext& context);

// The selected Python frame; nullopt, after printing no_python_frames_line(), when the thread
// has none. Throws like Session::current_thread().
std::optional<SelectedFrame> selected_python_frame();

cpython::VariableReader variable_reader(const Analysis& analysis);

}  // namespace hangpy::gdbplugin
