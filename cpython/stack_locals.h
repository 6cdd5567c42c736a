// The arguments and local variables of every Python frame of a process (coreanalyze --locals), as
// the bounded reprs of frame_variables.h; report/locals_report.h prints them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cpython/address_space.h"
#include "cpython/frame_variables.h"
#include "cpython/stacks.h"

namespace hangpy::cpython {

struct FrameLocals {
  std::vector<Variable> variables;   // arguments first, then locals; unbound left out
  std::optional<std::string> error;  // why they could not be read
};

using LocalsByFrame = std::map<uint64_t, FrameLocals>;  // by PythonFrame::address

// Reads the locals of every frame of every thread (each value within kMaxBytesReadPerValue); of
// a recursion's run, only the frames a report shows (kRepeatsShown at each end).
LocalsByFrame read_all_locals(const AddressSpace& memory, const ProcessStacks& stacks);

}  // namespace hangpy::cpython
