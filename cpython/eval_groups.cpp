#include "cpython/eval_groups.h"

namespace hangpy::cpython {

std::vector<FrameRange> eval_loop_groups(const PythonThread& thread) {
  std::vector<FrameRange> groups;
  size_t begin = 0;
  for (size_t i = 0; i < thread.frames.size(); ++i) {
    if (thread.frames[i].is_entry) {
      groups.push_back({begin, i + 1});
      begin = i + 1;
    }
  }
  // Frames after the last entry frame: the chain ended early (an error) or the version marks no
  // entry frames; they still belong to one call.
  if (begin < thread.frames.size()) groups.push_back({begin, thread.frames.size()});
  return groups;
}

}  // namespace hangpy::cpython
