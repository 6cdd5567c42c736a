// Which Python frames each call of the eval loop (_PyEval_EvalFrameDefault) runs, so that the
// Python frames can stand in the native stack where that call is. From 3.11 one eval-loop call
// runs Python-to-Python calls inline: its frames go from the innermost one out to the frame
// marked is_entry. Before 3.11 every Python frame has its own eval-loop call, and the walker
// marks each one is_entry.
#pragma once

#include <cstddef>
#include <vector>

#include "cpython/stacks.h"

namespace hangpy::cpython {

// Indexes [begin, end) into PythonThread::frames (innermost first).
struct FrameRange {
  size_t begin = 0;
  size_t end = 0;
};

// One range per eval-loop call, innermost call first.
std::vector<FrameRange> eval_loop_groups(const PythonThread& thread);

}  // namespace hangpy::cpython
