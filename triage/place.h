// Where a stack is, in the words of the verdict: "`all_reduce` at train.py:88", the innermost
// line of the user's own code and the function it calls there.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/program_place.h"
#include "triage/process_record.h"

namespace hangpy::triage {

struct Place {
  std::string function;  // the function called from `file:line` (or running there)
  std::string file;
  std::optional<int> line;
};

// The innermost Python frame outside the libraries, named by the function it calls (the next
// frame in, library or not) or its own when it is innermost; the innermost Python frame when all
// are library frames; for native frames only, the innermost one. Absent for an empty stack. In a
// multiprocessing child forked from its parent, only the frames from BaseProcess._bootstrap in
// count: those outside it are the parent's, inherited through fork.
std::optional<Place> place_of(const std::vector<Frame>& stack);

// "`all_reduce` at train.py:88" (file by its base name), "`futex_wait` in libc.so.6".
std::string format_place(const Place& place);

using hangpy::base_name;
using hangpy::is_library_file;

}  // namespace hangpy::triage
