// gdb's native frames of the selected thread (its own unwinder, with whatever symbols it has):
// what py-bt needs to say what each eval-loop call is calling in C, as libpython.py does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cpython/function_ranges.h"
#include "cpython/object_reader.h"
#include "cpython/stacks.h"

namespace hangpy::gdbplugin {

inline constexpr size_t kMaxNativeFrames = 4096;

struct GdbFrame {
  uint64_t pc = 0;
  uint64_t sp = 0;   // the stack pointer in this frame
  std::string name;  // empty when gdb has no symbol for it
  // The innermost frame only: the system call the thread is in (orig_rax; -1 none) and its first
  // argument (rdi): a futex() on the GIL's condition variable is a wait for the GIL.
  int64_t syscall = -1;
  uint64_t first_argument = 0;
  // The innermost frame only: its argument and callee-saved registers, where a C function just
  // entered keeps the object it was called with.
  std::vector<uint64_t> registers;
};

// [begin, end) of the GIL's condition variables and mutexes in the target's memory (see
// cpython::GilLayout::wait_begin), where the analysis knows them.
struct GilWaitRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Innermost first, at most kMaxNativeFrames; the walk stops where gdb's unwinder does, or at
// the `eval_loop_calls`-th frame named `eval_loop_function` (the outer frames say nothing more).
std::vector<GdbFrame> selected_thread_frames(std::string_view eval_loop_function,
                                             size_t eval_loop_calls);

// A line libpython's py-bt prints for a C frame, and the gdb frame it stands for (libpython's
// "#N" in py-bt-full, py-up and py-down).
struct CallLine {
  std::string text;
  size_t gdb_frame = 0;
};

struct EvalLoopCalls {
  // For each eval-loop call of `thread` (cpython::eval_loop_groups order) that gdb's frames were
  // matched with: the gdb frame of that call, and the lines for the C frames just inside it,
  // innermost first.
  std::vector<size_t> gdb_frames;
  std::vector<std::vector<CallLine>> calls;
  // Whether every eval-loop call was matched (gdb numbers all of the thread's Python frames).
  bool complete = false;
};

// The lines are "Waiting for the GIL", "Garbage-collecting" (by frame name, where gdb has the
// symbol; the GIL wait also, without take_gil's symbol, by the innermost frame's futex() on an
// address in `gil_wait`) and the built-in being called (found in memory, see
// cpython/builtin_call.h, with the C functions' bounds from `ranges`).
EvalLoopCalls eval_loop_calls(const std::vector<GdbFrame>& frames, const cpython::PythonThread& thread,
                              const cpython::ObjectReader& objects, std::string_view eval_loop_function,
                              const cpython::FunctionRanges* ranges,
                              std::optional<GilWaitRange> gil_wait = std::nullopt);

// The lines alone, as report::format_traceback takes them.
std::vector<std::vector<std::string>> call_texts(const EvalLoopCalls& calls);

}  // namespace hangpy::gdbplugin
