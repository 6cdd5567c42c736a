#include "native/builtin_call_notes.h"

#include "cpython/builtin_call.h"
#include "cpython/function_ranges.h"
#include "cpython/object_reader.h"
#include "cpython/value_stack.h"

namespace hangpy::native {

CallNotes find_call_notes(const cpython::Target& target, const cpython::Layout& layout,
                          const native::MergedStacks& merged) {
  CallNotes notes;
  cpython::ObjectReader objects(target.memory(), layout);
  const cpython::FunctionRanges ranges(target.memory(), target.modules());
  for (const auto& [lwp, stack] : merged) {
    const auto& frames = stack.frames;
    std::vector<cpython::PythonFrame> python_frames;  // the thread's, to bound a value stack
    for (const auto& frame : frames)
      if (frame.python) python_frames.push_back(*frame.python);
    size_t run_start = 0;  // the first native frame since the last Python frame
    for (size_t i = 0; i < frames.size(); ++i) {
      if (!frames[i].python) continue;
      // The first Python frame of an eval-loop call: the native frames just before it are the C
      // functions that call is in.
      if (i > run_start && frames[i].native && frames[run_start].native) {
        std::vector<uint64_t> pcs;
        for (size_t j = run_start; j < i; ++j)
          if (frames[j].native) pcs.push_back(frames[j].native->pc);
        const auto value_stack = cpython::value_stack_window(objects, *frames[i].python, python_frames,
                                                             cpython::kValueStackScanSlots);
        for (const auto& call : cpython::find_builtin_calls(objects, frames[run_start].native->sp,
                                                            frames[i].native->sp, pcs, &ranges, value_stack))
          notes[{lwp, i}].push_back(call.line);
      }
      run_start = i + 1;
    }
  }
  return notes;
}

}  // namespace hangpy::native
