#include "gdbplugin/python_stops.h"

#include <fmt/format.h>

#include "cpython/eval_groups.h"
#include "gdbplugin/frame_summary.h"
#include "gdbplugin/gdb_frames.h"
#include "gdbplugin/selected_frame.h"

namespace hangpy::gdbplugin {

EvalLoopCalls selected_thread_calls(const ThreadContext& context) {
  const Analysis& analysis = *context.analysis;
  const cpython::Layout& layout = *analysis.stacks->layout;
  cpython::ObjectReader objects(analysis.target->memory(), layout);
  std::optional<GilWaitRange> gil_wait;
  if (analysis.stacks->gil_address && layout.gil.wait_begin != cpython::kAbsent)
    gil_wait = GilWaitRange{*analysis.stacks->gil_address + static_cast<uint64_t>(layout.gil.wait_begin),
                            *analysis.stacks->gil_address + static_cast<uint64_t>(layout.gil.wait_end)};
  const size_t groups = cpython::eval_loop_groups(*context.thread).size();
  return eval_loop_calls(selected_thread_frames(layout.eval_loop_function, groups), *context.thread,
                         objects, layout.eval_loop_function, &analysis.function_ranges(), gil_wait);
}

std::vector<PythonStop> python_stops(const ThreadContext& context) {
  std::vector<PythonStop> stops;
  const auto groups = cpython::eval_loop_groups(*context.thread);
  const EvalLoopCalls calls = selected_thread_calls(context);
  for (size_t k = 0; k < groups.size(); ++k) {
    if (k < calls.calls.size()) {
      for (const CallLine& line : calls.calls[k])
        stops.push_back({calls.complete ? line.gdb_frame : groups[k].begin, std::nullopt, line.text});
    }
    for (size_t i = groups[k].begin; i < groups[k].end; ++i)
      stops.push_back({calls.complete ? calls.gdb_frames[k] : i, i, {}});
  }
  return stops;
}

std::string format_stop(const PythonStop& stop, const ThreadContext& context) {
  if (!stop.python_frame) return fmt::format("#{} {}\n", stop.number, stop.call);
  const cpython::PythonFrame& frame = context.thread->frames[*stop.python_frame];
  Session& session = Session::instance();
  return fmt::format("#{} {}\n{}", stop.number, frame_summary(frame, variable_reader(*context.analysis)),
                     source_line(frame, session.sources()));
}

std::optional<size_t> starting_stop(const std::vector<PythonStop>& stops) {
  if (!stops.empty() && !stops[0].python_frame) return 0;
  return std::nullopt;
}

}  // namespace hangpy::gdbplugin
