// The pure part of "blocked on": what a thread's innermost Python frames and native frames say it
// waits for, from names alone (no memory reads). diagnose() adds the objects and owners.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cpython/stacks.h"
#include "diagnosis/diagnosis.h"
#include "native/splice.h"

namespace hangpy::diagnosis {

// A standard-library wait found among the innermost Python frames.
struct StdlibWait {
  size_t frame = 0;  // index (innermost first) of the frame that names the wait
  // kCondition for threading's `wait` (Event, Barrier and Condition all end in one; the caller
  // tells them apart by the type of the frame's `self`), kSemaphore for threading's `acquire`
  // (likewise), else the kind itself.
  WaitKind kind = WaitKind::kUnknown;
  std::string what;  // "queue.Queue.get", "Thread.join", ...
};

// The outermost recognised frame of the run of standard-library frames at the top of the stack
// (Queue.get rather than the Condition.wait it calls), or nullopt when the innermost frames are
// not a known wait.
std::optional<StdlibWait> find_stdlib_wait(const std::vector<cpython::PythonFrame>& frames);

// Whether the thread waits for work to come, not for something it started: the wait at the top
// of its stack (a queue's get, select, accept, an event loop with nothing to run) is called by a
// worker or server loop (a thread pool's worker, a DataLoader worker, a process pool's worker, a
// pre-fork server's worker, socketserver). A worker that hangs inside the work it was given
// (a DataLoader worker in the dataset's __getitem__) is not idle.
bool waits_for_work(const std::vector<cpython::PythonFrame>& frames);

// What the native frames say, innermost first.
struct NativeHint {
  bool takes_gil = false;     // take_gil or one of its clones
  bool collecting = false;    // inside the garbage collector
  bool pthread_mutex = false; // pthread_mutex_lock / __lll_lock_wait
  std::optional<std::string> collective;  // "allreduce (gloo)", "barrier (NCCL)": c10d frames
  std::string thread_pool;  // "OpenMP (libgomp)", "OpenBLAS", ...: a frame of a pool's library
  std::string innermost_symbol;  // the innermost native frame's symbol, "" when none
  bool innermost_is_python = false;  // the innermost frame with a name is a Python frame or the eval loop
  // The innermost native frame outside the C library (whose futex/poll wrappers say little):
  // "libgomp.so.1+0x1f823", or its symbol; "" when none.
  std::string caller_outside_libc;
};
NativeHint read_native_hint(const native::MergedStack& stack, std::string_view eval_loop_function);

// Whether `symbol` is `name` or a compiler clone of it (`name.lto_priv.0`, `name.constprop.0`).
bool is_symbol_or_clone(std::string_view symbol, std::string_view name);

}  // namespace hangpy::diagnosis
