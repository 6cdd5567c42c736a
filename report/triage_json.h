// The triage as JSON for scripts (coreanalyze triage --json); the schema is in
// docs/json-schema.md ("coreanalyze triage --json"). Also the data the HTML page draws.
#pragma once

#include <nlohmann/json.hpp>

#include "triage/merge.h"

namespace hangpy::report {

nlohmann::json triage_document(const triage::Triage& triage);

}  // namespace hangpy::report
