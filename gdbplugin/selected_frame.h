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

// What a command does when the selection is a C call's line (py-up stopped at
// "<built-in method ...>"): refuse, as libpython's py-list does ("Unable to read information on
// python frame"), or work on the Python frame that made the call, whose variables are the ones
// in scope there (py-locals, py-print; CPython's test_print_after_up).
enum class AtCallLine { kRefuse, kCallingFrame };

// The selected Python frame; nullopt, after printing no_python_frames_line(), when the thread
// has none. Throws like Session::current_thread().
std::optional<SelectedFrame> selected_python_frame(AtCallLine at_call_line);

cpython::VariableReader variable_reader(const Analysis& analysis);

}  // namespace hangpy::gdbplugin
