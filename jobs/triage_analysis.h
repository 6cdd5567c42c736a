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
  size_t process_count = 0;                      // how many processes it gave (first one included)
};

struct TriageAnalysisOptions {
  std::vector<std::string> child_arguments;  // passed to each child before the core or --pid
  unsigned jobs = 0;                         // 0: as many as processors
  bool progress = false;                     // a bar on stderr (only when it is a terminal)
};

// One outcome per input, in the inputs' order. With `first_processes`, each input's first
// process is moved, as soon as it is read, to (*first_processes)[i] (resized to one per input;
// a default record where the input gave none) and its outcome keeps the rest: the records of a
// fleet are then made in the vector the triage reads, and no second copy of each one's fixed
// part (400 bytes: 40 MB at 100,000 ranks) is held while they move there.
std::vector<TriageOutcome> analyse_triage_inputs(const std::vector<TriageInput>& inputs,
                                                 const TriageAnalysisOptions& options,
                                                 std::vector<triage::ProcessRecord>* first_processes = nullptr);

}  // namespace hangpy::jobs
