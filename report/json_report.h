// The JSON document `coreanalyze --json` prints; the schema is documented in docs/json-schema.md.
// This file owns its whole shape: shells hand over what they know and print the result.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpython/stacks.h"
#include "cpython/target.h"
#include "report/process_labels.h"

namespace hangpy::report {

// What a shell knows of the analysed process besides its stacks.
struct AnalysedInput {
  std::string core;                   // the input as the user named it
  cpython::ProcessInfo process;
  std::vector<std::string> modules;   // the mapped files, as the target records them
  std::vector<std::string> warnings;  // the target's own problems (missing files, truncation)
  cpython::ProcessEnvironment environment;     // the label variables and the host, for "process"
  std::vector<cpython::NativeThread> threads;  // the OS threads, with their CPU time where known
};

// The whole document: threads with frames outermost first (traceback order), as documented,
// except that a recursion's frames past the first kRepeatsShown are null: the parts added after
// skip them, and fold_repeated_frames (repeated_frames.h), which must come last, folds them.
nlohmann::json process_document(const AnalysedInput& input, const cpython::ProcessStacks& stacks);

}  // namespace hangpy::report
