// gdb's native frames of the selected thread (its own unwinder, with whatever symbols it has):
// what py-bt needs to say what each eval-loop call is calling in C, as libpython.py does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// For each eval-loop call of `thread` (cpython::eval_loop_groups order), the lines libpython's
// py-bt prints for the C frames just inside it: "Waiting for the GIL", "Garbage-collecting" (by
// frame name, where gdb has the symbol; the GIL wait also, without take_gil's symbol, by the
// innermost frame's futex() on an address in `gil_wait`) and the built-in being called (found in
// memory, see cpython/builtin_call.h). Empty when the eval-loop frames cannot be matched.
std::vector<std::vector<std::string>> call_lines(const std::vector<GdbFrame>& frames,
                                                 const cpython::PythonThread& thread,
                                                 const cpython::ObjectReader& objects,
                                                 std::string_view eval_loop_function,
                                                 std::optional<GilWaitRange> gil_wait = std::nullopt);

}  // namespace hangpy::gdbplugin
