// The built-in each eval-loop call of a merged stack (coreanalyze --native) is calling, named as
// libpython.py's py-bt names it, found in the native stack between the eval-loop frames
// (cpython/builtin_call.h); report/builtin_calls_report.h prints each just above the Python frame
// that calls it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cpython/layout.h"
#include "cpython/target.h"
#include "native/splice.h"

namespace hangpy::native {

// (LWP, index of a frame in its MergedStack) -> the lines to print before that frame.
using CallNotes = std::map<std::pair<int64_t, size_t>, std::vector<std::string>>;

// The C functions' bounds come from the modules' unwind tables, read through `target`.
CallNotes find_call_notes(const cpython::Target& target, const cpython::Layout& layout,
                          const MergedStacks& merged);

}  // namespace hangpy::native
