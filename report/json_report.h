// The JSON form of a process's stacks; the schema is documented in docs/json-schema.md.
#pragma once

#include <nlohmann/json.hpp>

#include "cpython/stacks.h"

namespace hangpy::report {

// Threads with frames outermost first (traceback order), as documented.
nlohmann::json stacks_to_json(const cpython::ProcessStacks& stacks);

}  // namespace hangpy::report
