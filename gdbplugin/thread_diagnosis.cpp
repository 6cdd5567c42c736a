#include "gdbplugin/thread_diagnosis.h"

#include "analysis/process_analysis.h"

namespace hangpy::gdbplugin {

diagnosis::ProcessDiagnosis diagnose_process(const Analysis& analysis) {
  // Registers and Python frames say most; gdb's unwinder (GdbTarget::native_unwinding) is asked
  // only for the threads analysis::vague_threads names (the rule coreanalyze follows too), and
  // for a collective's backend workers.
  return analysis::diagnose_threads_of(*analysis.target, *analysis.stacks);
}

}  // namespace hangpy::gdbplugin
