// The triage as one self-contained HTML page: the verdict, the groups with their colours, the
// merged tree drawn as SVG by the page's own script, and each group's representative stacks.
// Nothing is fetched from the network: style, script and data are all inside the page.
#pragma once

#include <string>

#include "triage/merge.h"

namespace hangpy::report {

std::string triage_html(const triage::Triage& triage);

}  // namespace hangpy::report
