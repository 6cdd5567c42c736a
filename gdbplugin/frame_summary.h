// The texts the frame-level commands print about one Python frame, in libpython.py's shapes:
//   Frame 0x7f..., for file /x.py, line 12, in descend (depth=0, lock=<...>)
//       lock.acquire()
#pragma once

#include <string>

#include "cpython/frame_variables.h"
#include "cpython/stacks.h"
#include "report/source_reader.h"

namespace hangpy::gdbplugin {

// libpython's limit for one summary line (MAX_OUTPUT_LEN), and its truncation mark.
inline constexpr size_t kMaxSummaryLength = 1024;

// "Frame 0x..., for file F, line L, in NAME (name=repr, ...)", cut at kMaxSummaryLength.
std::string frame_summary(const cpython::PythonFrame& frame,
                          const cpython::VariableReader& variables);

// "    <the source line, stripped>\n", or "" when the file cannot be read.
std::string source_line(const cpython::PythonFrame& frame, report::SourceReader& sources);

}  // namespace hangpy::gdbplugin
