// What py-bt-full prints and py-up / py-down stop at, innermost first, as libpython.py has them:
// each Python frame, and each C frame libpython finds worth a line ("<built-in method ...>",
// "Waiting for the GIL", "Garbage-collecting") just inside the eval-loop call that made it. Each
// carries libpython's "#N": the number of the gdb frame it stands for (all Python frames of one
// eval-loop call share their call's number, as in libpython from 3.11).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gdbplugin/analysis_cache.h"
#include "gdbplugin/gdb_frames.h"

namespace hangpy::gdbplugin {

struct PythonStop {
  size_t number = 0;                  // "#N"
  std::optional<size_t> python_frame{};  // index into the thread's frames; none for a C frame's line
  std::string call{};                    // the C frame's line
};

// The selected thread's (`context`, which runs Python) eval-loop calls matched with gdb's frames,
// and the lines libpython prints for the C frames inside them (py-bt and py-bt-full share it).
EvalLoopCalls selected_thread_calls(const ThreadContext& context);

// The stops of the selected thread (`context`, which runs Python). Where gdb's frames cannot all
// be matched with the thread's eval-loop calls (gdb's unwinder gave up early, no symbol for the
// eval loop), the Python frames are numbered by their own index instead, innermost 0.
std::vector<PythonStop> python_stops(const ThreadContext& context);

// "#N Frame 0x..., for file ..., line L, in NAME (locals)\n    source\n" or "#N <line>\n".
std::string format_stop(const PythonStop& stop, const ThreadContext& context);

// The stop py-up starts from when none was selected since gdb stopped: the innermost C frame's
// line, where the innermost stop is one (libpython's starting frame, from a breakpoint in C); none
// when gdb's frame is below every stop.
std::optional<size_t> starting_stop(const std::vector<PythonStop>& stops);

}  // namespace hangpy::gdbplugin
