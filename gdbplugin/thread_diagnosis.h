// The diagnosis (diagnosis/) of the process gdb debugs, for py-threads and py-deadlock: the
// registers and native frame names come from gdb (each thread selected in turn), the Python
// stacks and memory from the session's analysis.
#pragma once

#include "diagnosis/diagnosis.h"
#include "gdbplugin/analysis_cache.h"

namespace hangpy::gdbplugin {

// Throws PythonErrorSet on Ctrl-C; gdb's own errors leave a thread without registers or frames.
diagnosis::ProcessDiagnosis diagnose_process(const Analysis& analysis);

}  // namespace hangpy::gdbplugin
