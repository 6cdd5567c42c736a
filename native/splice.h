// One stack per thread that reads through Python and C: each native frame of the eval loop is
// replaced by the Python frames that eval-loop call runs. Pure: no I/O, no unwinder.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cpython/stacks.h"
#include "native/native_frame.h"

namespace hangpy::native {

struct MergedFrame {
  // A native frame; for a Python frame, the eval-loop frame that runs it (nullopt when the
  // native walk ended before reaching that eval-loop call).
  std::optional<NativeFrame> native;
  std::optional<cpython::PythonFrame> python;  // set for a Python frame
};

// Whether `symbol` is a call of the eval loop named `eval_loop_function`: the function itself or
// one of the compiler's clones of it (`_PyEval_EvalFrameDefault.lto_priv.0`, `.cold`, `.isra.0`).
bool is_eval_loop_symbol(std::string_view symbol, std::string_view eval_loop_function);

// Innermost first. A native frame is an eval-loop call when its symbol says so, or (3.12 on) when
// its stack holds the entry frame of the next group (PythonFrame::entry_frame_on_c_stack).
// The k-th eval-loop frame (innermost first, inlined copies excluded) gets the
// k-th group of cpython::eval_loop_groups; Python frames left over when the native walk ended
// early go at the end, without a native frame. Eval-loop frames left over stay native.
std::vector<MergedFrame> splice(const std::vector<NativeFrame>& native,
                                const cpython::PythonThread& thread,
                                std::string_view eval_loop_function);

}  // namespace hangpy::native

namespace hangpy::native {

// One OS thread's merged stack, as a shell hands it to the formatters.
struct MergedStack {
  int64_t lwp = 0;
  std::vector<MergedFrame> frames;        // innermost first
  std::optional<std::string> end_reason;  // why the native walk ended early (NativeStack)
  std::optional<std::string> error;       // why there is no native stack at all
  // The native frames as unwound, before the Python frames were spliced in: what a snapshot
  // records (recorded_stacks.h), to be spliced again when it is read.
  std::vector<NativeFrame> unwound;
};

// Every unwound thread's merged stack, by LWP.
using MergedStacks = std::map<int64_t, MergedStack>;

}  // namespace hangpy::native
