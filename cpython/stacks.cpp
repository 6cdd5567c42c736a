#include "cpython/stacks.h"

#include <algorithm>

namespace hangpy::cpython {

std::string PythonVersion::text() const {
  std::string text = micro >= 0 ? fmt::format("{}.{}.{}", major, minor, micro)
                                : fmt::format("{}.{}", major, minor);
  if (free_threaded) text += "t";
  if (trace_refs) text += "d";
  return text;
}

bool ProcessStacks::partial() const {
  return !warnings.empty() ||
         std::any_of(threads.begin(), threads.end(),
                     [](const PythonThread& thread) { return thread.error.has_value(); });
}

bool repeats_previous(const PythonFrame& frame, const PythonFrame& previous) {
  return frame.file == previous.file && frame.line == previous.line && frame.function == previous.function &&
         frame.qualname == previous.qualname;
}

}  // namespace hangpy::cpython
