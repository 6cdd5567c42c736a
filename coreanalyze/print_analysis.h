// Printing one analysis, text or JSON: shared by the core and the live-process paths.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/process_analysis.h"
#include "coreanalyze/command_line.h"
#include "diagnosis/task_waits.h"
#include "cpython/stacks.h"
#include "diagnosis/diagnosis.h"
#include "report/builtin_calls_report.h"
#include "report/json_report.h"
#include "report/locals_report.h"
#include "report/native_report.h"

namespace hangpy::coreanalyze {

// What one run found, beside the Python stacks: each part is there only when asked for.
struct Findings {
  const native::MergedStacks* merged = nullptr;      // --native
  const cpython::LocalsByFrame* locals = nullptr;     // --locals
  const native::CallNotes* call_notes = nullptr;     // --native: the built-ins being called
  const diagnosis::ProcessDiagnosis* diagnosis = nullptr;
  const diagnosis::TaskForest* tasks = nullptr;       // unless --no-tasks
};

// What an analysis found, for printing: pointers into `details` and `native`.
Findings findings_of(const analysis::Details& details, const native::MergedStacks* native);

nlohmann::json json_document(const CommandLine& line, const report::AnalysedInput& input,
                             const cpython::ProcessStacks& stacks, const Findings& found);
void print_json(const nlohmann::json& document);
// What the command line asks of one process's analysis (analysis/process_analysis.h), core or
// live; `missing_binaries_remedy` is what to try when the interpreter's binaries are not found.
analysis::Request analysis_request(const CommandLine& line, std::string missing_binaries_remedy);

// Warnings and notes on stderr, the report on stdout.
void print_text(const CommandLine& line, const report::AnalysedInput& input,
                const cpython::ProcessStacks& stacks, const Findings& found);

}  // namespace hangpy::coreanalyze
