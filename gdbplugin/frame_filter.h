// Python frames in gdb's `bt` (frame_filter.py is the filter; this is its C++ side).
#pragma once

#include "gdbplugin/python_ref.h"

namespace hangpy::gdbplugin {

// Defines frame_filter.py in `module` with its C++ helpers and registers the filter with gdb.
void install_frame_filter(PyObject* module);

// The filter's `enabled` flag (`hangpy bt on|off`; gdb's `enable|disable frame-filter` too).
bool frame_filter_enabled();
void enable_frame_filter(bool enabled);

}  // namespace hangpy::gdbplugin
