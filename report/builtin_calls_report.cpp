#include "report/builtin_calls_report.h"

#include "base/printable.h"

#include <fmt/format.h>

#include "cpython/builtin_call.h"

namespace hangpy::report {

CallNotes find_call_notes(const cpython::Target& target, const cpython::Layout& layout,
                          const MergedStacks& merged) {
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

std::string format_call_notes(const CallNotes& notes, int64_t lwp, size_t index) {
  auto found = notes.find({lwp, index});
  if (found == notes.end()) return {};
  std::string text;
  for (const std::string& line : found->second) text += fmt::format("       {}\n", for_terminal(line));
  return text;
}

}  // namespace hangpy::report
