#include "cpython/value_stack.h"

#include <algorithm>

namespace hangpy::cpython {
namespace {

constexpr uint64_t kMaxFastSlots = 4096;  // locals, cells and free variables of one frame

}  // namespace

std::optional<ValueStackWindow> value_stack_window(const ObjectReader& objects, const PythonFrame& frame,
                                                   const std::vector<PythonFrame>& frames,
                                                   size_t max_slots) {
  const Layout& layout = objects.layout();
  const AddressSpace& memory = objects.memory();
  if (layout.frame.localsplus == kAbsent || frame.code_address == 0) return std::nullopt;
  // The fast slots counted from the code object's name tuples (their sizes, not their names).
  uint64_t fast = 0;
  const VariablesLayout& v = layout.variables;
  for (int32_t offset : {v.code_local_names, v.code_cell_names, v.code_free_names}) {
    if (offset == kAbsent) continue;
    auto tuple = read_pointer(memory, frame.code_address + static_cast<uint64_t>(offset));
    if (!tuple) return std::nullopt;
    auto size = read_value<int64_t>(memory, *tuple + static_cast<uint64_t>(layout.object.ob_size));
    if (!size || *size < 0 || static_cast<uint64_t>(*size) > kMaxFastSlots) return std::nullopt;
    fast += static_cast<uint64_t>(*size);
  }
  ValueStackWindow window{frame.address + static_cast<uint64_t>(layout.frame.localsplus) + 8 * fast, max_slots};
  // A frame object (up to 3.10) is a variable-size object: ob_size slots (locals, cells, frees,
  // then the value stack) are all it has; a slot past them is a heap neighbour, whatever it
  // holds, so it is not read (a snapshot keeps what the analysis read).
  if (layout.frame.model == FrameModel::kFrameObject) {
    auto extras = read_value<int64_t>(memory, frame.address + static_cast<uint64_t>(layout.object.ob_size));
    if (!extras || *extras < 0 || static_cast<uint64_t>(*extras) < fast) return std::nullopt;
    window.slots = std::min<size_t>(window.slots, static_cast<uint64_t>(*extras) - fast);
  }
  // A frame just above this one (the frame it called, from 3.11 pushed on the same data stack)
  // is no slot of this frame's stack: its code and locals would count as this frame's.
  for (const PythonFrame& other : frames)
    if (other.address >= window.base && other.address - window.base < 8 * window.slots)
      window.slots = (other.address - window.base) / 8;
  return window;
}

}  // namespace hangpy::cpython
