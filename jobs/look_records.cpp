#include "jobs/look_records.h"

#include <fmt/format.h>

#include "base/printable.h"
#include "jobs/triage_inputs.h"
#include "triage/labels.h"

namespace hangpy::jobs {

LookRecords read_look(const std::vector<std::string>& paths, const TriageAnalysisOptions& options) {
  LookRecords look;
  auto inputs = gather_triage_inputs(paths, {}, look.problems);
  if (!inputs) {
    look.problems.push_back(inputs.error().describe());
    return look;
  }
  for (TriageOutcome& outcome : analyse_triage_inputs(*inputs, options)) {
    if (outcome.processes.empty()) look.problems.push_back("left out " + outcome.error);
    for (auto& process : outcome.processes) look.processes.push_back(std::move(process));
  }
  return look;
}

std::string process_label(const triage::ProcessRecord& process) {
  const auto& labels = process.labels;
  const std::string pid = labels.pid ? std::to_string(*labels.pid) : std::string("?");
  std::string text;
  const auto rank = triage::rank_of(labels);
  if (labels.dataloader_worker_id) {
    text = fmt::format("DataLoader worker {}{} (pid {})", *labels.dataloader_worker_id,
                       rank ? fmt::format(" of rank {}", *rank) : std::string(), pid);
  } else if (rank) {
    text = fmt::format("rank {} (pid {})", *rank, pid);
  } else text = fmt::format("pid {} ({})", pid, process.command.empty() ? "?" : process.command);
  return for_terminal(text);
}

}  // namespace hangpy::jobs
