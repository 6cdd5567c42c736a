#include "native/splice.h"

#include "cpython/eval_groups.h"

namespace hangpy::native {

bool is_eval_loop_symbol(std::string_view symbol, std::string_view eval_loop_function) {
  if (eval_loop_function.empty() || !symbol.starts_with(eval_loop_function)) return false;
  // GCC names the pieces of a function it split or specialised `name.suffix`; the cold part of
  // the eval loop is still inside the same call.
  return symbol.size() == eval_loop_function.size() || symbol[eval_loop_function.size()] == '.';
}

std::vector<MergedFrame> splice(const std::vector<NativeFrame>& native,
                                const cpython::PythonThread& thread,
                                std::string_view eval_loop_function) {
  const std::vector<cpython::FrameRange> groups = cpython::eval_loop_groups(thread);
  std::vector<MergedFrame> merged;
  merged.reserve(native.size() + thread.frames.size());
  size_t next_group = 0;
  auto add_group = [&](const std::optional<NativeFrame>& eval_frame) {
    const cpython::FrameRange& range = groups[next_group++];
    for (size_t i = range.begin; i < range.end; ++i)
      merged.push_back(MergedFrame{eval_frame, thread.frames[i]});
  };
  // Whether native[i]'s own stack holds the entry frame of the next group: its locals lie from
  // its stack pointer up to its caller's.
  auto holds_next_entry = [&](size_t i) {
    if (next_group >= groups.size()) return false;
    const uint64_t anchor = thread.frames[groups[next_group].end - 1].entry_frame_on_c_stack;
    if (anchor == 0 || anchor < native[i].sp) return false;
    return i + 1 >= native.size() || anchor < native[i + 1].sp;
  };
  for (size_t i = 0; i < native.size(); ++i) {
    const NativeFrame& frame = native[i];
    // An inlined copy is not a call of the eval loop of its own (libpython.py decides the same).
    if (!frame.inlined && next_group < groups.size() &&
        (is_eval_loop_symbol(frame.symbol, eval_loop_function) || holds_next_entry(i))) {
      // Code made at run time that runs the group (CPython's JIT) is shown, then its frames.
      if (frame.symbol == kGeneratedCodeName) merged.push_back(MergedFrame{frame, std::nullopt});
      add_group(frame);
    } else {
      merged.push_back(MergedFrame{frame, std::nullopt});
    }
  }
  while (next_group < groups.size()) add_group(std::nullopt);
  return merged;
}

}  // namespace hangpy::native
