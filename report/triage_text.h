// The triage as text: the verdict first, then the merged tree, then each class's representative
// stacks in full (issue 11).
#pragma once

#include <string>

#include "triage/merge.h"

namespace hangpy::report {

// The merged tree alone: one line per frame, a chain of frames shared by the same threads at one
// indentation, and "[N threads: ranks ...]" where the threads or processes change.
std::string format_triage_tree(const triage::Triage& triage);

// One class: its description, its representative, and that process's stacks (identical threads
// once, "2 threads alike").
std::string format_triage_class(const triage::Triage& triage, int class_index);

// Verdict line, notes, tree, classes.
std::string format_triage(const triage::Triage& triage);

}  // namespace hangpy::report
