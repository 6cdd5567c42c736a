#include "gdbplugin/thread_diagnosis.h"

#include <set>

#include "analysis/process_analysis.h"
#include "gdbplugin/gdb_api.h"
#include "gdbplugin/gdb_info.h"
#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

// Enough for take_gil, pthread_mutex_lock or the collector under the innermost call; each frame
// costs gdb an unwind step (48 frames took 27 ms a thread on Debian's 3.11).
constexpr size_t kNativeFramesPerThread = 16;

}  // namespace

diagnosis::ProcessDiagnosis diagnose_process(const Analysis& analysis) {
  const analysis::TargetFacts facts = analysis.target->facts();
  const cpython::AddressSpace& memory = analysis.target->memory();
  // Registers and Python frames say most; gdb's unwinder (about 1 ms a frame) is asked only for
  // the threads analysis::vague_threads names (the rule coreanalyze follows too), and for a
  // collective's backend workers.
  diagnosis::ProcessDiagnosis diagnosis = analysis::diagnose_threads(memory, *analysis.stacks, nullptr, facts);
  auto unwind = [](const cpython::ProcessStacks&, const std::set<int64_t>& lwps) -> std::optional<native::MergedStacks> {
    native::MergedStacks native;
    for (ThreadWaitState& state : thread_wait_states(kNativeFramesPerThread, lwps)) {
      if (state.frame_names.empty()) continue;
      // gdb's names are the frames' only facts here: no Python frames are spliced in, which the
      // diagnosis does not need (it reads Python frames from the analysis).
      native::MergedStack stack;
      stack.lwp = state.lwp;
      for (std::string& name : state.frame_names) {
        native::NativeFrame frame;
        frame.symbol = std::move(name);
        stack.frames.push_back(native::MergedFrame{frame, std::nullopt});
      }
      native.emplace(state.lwp, std::move(stack));
    }
    if (native.empty()) return std::nullopt;
    return native;
  };
  analysis::diagnose_with_native_stacks(memory, *analysis.stacks, facts, unwind, diagnosis);
  return diagnosis;
}

}  // namespace hangpy::gdbplugin
