// Names for the pcs of a libdwfl walk: the ELF symbol (.symtab, .dynsym, or the MiniDebugInfo
// .gnu_debugdata table, which elfutils reads itself when built with lzma), the functions inlined
// at that pc where DWARF is present, and how each frame was found.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <vector>

#include "native/native_frame.h"

namespace hangpy::native {

// One frame as the walk saw it, before it has a name.
struct RawFrame {
  uint64_t pc = 0;
  uint64_t sp = 0;
  bool is_activation = false;  // pc is where the frame stopped, not a return address
};

// The named frames of one thread, innermost first: each raw frame gives one NativeFrame, preceded
// by one inlined NativeFrame per function DWARF says is inlined at its pc.
std::vector<NativeFrame> symbolize(Dwfl* dwfl, const std::vector<RawFrame>& raw);

}  // namespace hangpy::native
