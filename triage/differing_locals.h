// What the program itself says sets the odd processes apart: in the deepest Python frame every
// process of both groups runs (the training loop, the request handler), the locals whose value is
// one thing in every odd process and another in every other ("rank 3: step = 21; others:
// step = 22"). Read from the documents' locals (coreanalyze --locals, which collect and triage
// ask their analyses for).
#pragma once

#include <optional>
#include <string>

#include "triage/merge.h"

namespace hangpy::triage {

// The line for odd class `odd` against the majority class `majority` (indexes into
// triage.classes): "in `run` at train.py, rank 2: batches = 2, batch = 1; others: batches = 3,
// batch = 2"; nullopt when the processes share no frame with locals, or no local differs so.
std::optional<std::string> differing_locals(const Triage& triage, int odd, int majority);

}  // namespace hangpy::triage
