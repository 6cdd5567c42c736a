// Where a Python frame's value stack lies: the slots after its fast slots (locals, cells, free
// variables), which hold the callable of the call it makes and a `with`'s bound __exit__. Its depth
// is not recorded while the frame runs, so a window from the bottom is read; slots above the top
// may be stale. One rule for every reader of it (lock ownership, the built-in a frame calls).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cpython/object_reader.h"
#include "cpython/stacks.h"

namespace hangpy::cpython {

struct ValueStackWindow {
  uint64_t base = 0;  // the first value-stack slot
  size_t slots = 0;   // how many may be read as this frame's
};

// At most `max_slots` slots, never past the frame object's own slots (up to 3.10: a slot past
// them is a heap neighbour) nor into another frame of the thread (from 3.11 the frame it called
// is pushed just above it on the same data stack). nullopt where the code object cannot be read.
std::optional<ValueStackWindow> value_stack_window(const ObjectReader& objects, const PythonFrame& frame,
                                                   const std::vector<PythonFrame>& frames,
                                                   size_t max_slots);

}  // namespace hangpy::cpython
