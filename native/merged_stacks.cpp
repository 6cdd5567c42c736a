#include "native/merged_stacks.h"

#include "native/recorded_stacks.h"

namespace hangpy::native {
namespace {

// The thread's native stack with, for a Python thread, its Python frames spliced in.
MergedStack merged_stack(const Expected<NativeStack>& stack, int64_t lwp, const cpython::PythonThread* thread,
                         std::string_view eval_loop_function) {
  MergedStack merged;
  merged.lwp = lwp;
  if (!stack) {
    merged.error = stack.error().describe();
    return merged;
  }
  merged.end_reason = stack->end_reason;
  merged.unwound = stack->frames;
  if (thread != nullptr) {
    merged.frames = splice(stack->frames, *thread, eval_loop_function);
  } else {
    for (const NativeFrame& frame : stack->frames) merged.frames.push_back(MergedFrame{frame, std::nullopt});
  }
  return merged;
}

}  // namespace

MergedStacks merge_native_stacks(const UnwindThread& unwind, const cpython::ProcessStacks& stacks,
                                 bool all_threads, const std::set<int64_t>* only) {
  const std::string_view eval_loop = stacks.layout ? stacks.layout->eval_loop_function : "";
  MergedStacks merged;
  for (const cpython::PythonThread& thread : stacks.threads) {
    if (!thread.native_thread_id) continue;
    const auto lwp = static_cast<int64_t>(*thread.native_thread_id);
    if (only != nullptr && !only->contains(lwp)) continue;
    merged[lwp] = merged_stack(unwind(lwp), lwp, &thread, eval_loop);
  }
  if ((all_threads || only != nullptr) && stacks.threads_without_python) {
    for (int64_t lwp : *stacks.threads_without_python) {
      if (!all_threads && !only->contains(lwp)) continue;
      merged[lwp] = merged_stack(unwind(lwp), lwp, nullptr, eval_loop);
    }
  }
  return merged;
}

std::vector<std::byte> recorded_native_stacks(const MergedStacks& merged) {
  std::vector<NativeStack> stacks;
  for (const auto& [lwp, stack] : merged) {
    if (stack.error) continue;  // nothing was unwound: the reader may try again
    stacks.push_back(NativeStack{lwp, stack.unwound, stack.end_reason});
  }
  return encode_native_stacks(stacks);
}

}  // namespace hangpy::native
