// The processes of one look (a collect directory, JSON results, cores or snapshot cores) as triage
// records: what `watch` and `diff` compare. Cores are analysed by child coreanalyze runs, as in
// the triage (triage_analysis.h).
#pragma once

#include <string>
#include <vector>

#include "jobs/triage_analysis.h"
#include "triage/process_record.h"

namespace hangpy::jobs {

struct LookRecords {
  std::vector<triage::ProcessRecord> processes;
  std::vector<std::string> problems;  // one line each: an input left out, a note on the paths
};

LookRecords read_look(const std::vector<std::string>& paths, const TriageAnalysisOptions& options);

// "rank 2 (pid 4242)", "pid 4242 (python3)": a process in a line of watch's or diff's output.
std::string process_label(const triage::ProcessRecord& process);

}  // namespace hangpy::jobs
