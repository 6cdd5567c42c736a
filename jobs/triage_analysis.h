// The analyses of coreanalyze triage's inputs, in parallel: JSON results are read and parsed, and
// each core or PID is analysed by a child coreanalyze --json (this very program), on a pool of
// worker threads as large as the machine has processors.
//
// A child per core or process, not a thread: one corrupt core that crashes or hangs the analysis
// must cost the triage that input only, and a live process's stop window, its signal handling
// and its --max-stop timer are per-process state in coreanalyze --pid.
#pragma once

#include <string>
#include <vector>

#include "jobs/triage_inputs.h"
#include "triage/process_record.h"

namespace hangpy::jobs {

struct TriageOutcome {
  std::vector<triage::ProcessRecord> processes;  // empty when the input could not be analysed
  int exit_code = 0;                             // the analysis's (coreanalyze's exit codes)
  std::string error;                             // one line when processes is empty
  std::vector<std::string> warnings;             // one line each: what of the input was cut
};

struct TriageAnalysisOptions {
  std::vector<std::string> child_arguments;  // passed to each child before the core or --pid
  unsigned jobs = 0;                         // 0: as many as processors
  bool progress = false;                     // a bar on stderr (only when it is a terminal)
};

// One outcome per input, in the inputs' order.
std::vector<TriageOutcome> analyse_triage_inputs(const std::vector<TriageInput>& inputs,
                                                 const TriageAnalysisOptions& options);

}  // namespace hangpy::jobs
