#include "cpython/stack_locals.h"

namespace hangpy::cpython {

LocalsByFrame read_all_locals(const AddressSpace& memory,
                              const ProcessStacks& stacks) {
  LocalsByFrame locals;
  if (!stacks.layout) return locals;
  VariableReader reader(memory, *stacks.layout);
  for (const auto& thread : stacks.threads) {
    const std::vector<PythonFrame>& frames = thread.frames;
    for (size_t i = 0, run_start = 0; i < frames.size(); ++i) {
      if (i == 0 || !repeats_previous(frames[i], frames[i - 1])) run_start = i;
      size_t run_end = i + 1;
      while (run_end < frames.size() && run_end - i <= kRepeatsShown &&
             repeats_previous(frames[run_end], frames[run_end - 1]))
        ++run_end;
      // Recursion is folded to kRepeatsShown frames of each run (its outermost or innermost
      // ones, as the report's order has it): the frames folded away are not read.
      const bool among_first = i - run_start < kRepeatsShown;
      const bool among_last = run_end - i <= kRepeatsShown;  // the run ends within them
      if (!among_first && !among_last) continue;
      const PythonFrame& frame = frames[i];
      FrameLocals& found = locals[frame.address];
      auto variables = reader.locals(frame);
      if (variables) found.variables = std::move(*variables);
      else found.error = variables.error().describe();
    }
  }
  return locals;
}

}  // namespace hangpy::cpython
