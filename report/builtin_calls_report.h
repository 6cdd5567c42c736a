// The built-in each eval-loop call of a merged stack (coreanalyze --native) is calling, named as
// libpython.py's py-bt names it, found in the native stack between the eval-loop frames
// (cpython/builtin_call.h); the text prints it just above the Python frame that calls it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "native/builtin_call_notes.h"

namespace hangpy::report {

// The text printed before frame `index` of LWP `lwp`'s merged stack (empty when none).
std::string format_call_notes(const native::CallNotes& notes, int64_t lwp, size_t index);

}  // namespace hangpy::report
