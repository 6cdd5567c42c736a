// The merged tree in Graphviz's DOT language, as STAT draws it: a box per chain of frames, edges
// labelled with thread counts and rank sets, classes coloured, outliers in red. `dot -Tsvg` makes
// the SVG picture of it.
#pragma once

#include <string>

#include "triage/merge.h"

namespace hangpy::report {

std::string triage_dot(const triage::Triage& triage);

}  // namespace hangpy::report
