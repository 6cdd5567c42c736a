// coreanalyze --locals: the arguments and local variables of every Python frame, as the bounded
// reprs of cpython/frame_variables.h (libpython.py's shapes), under each frame in the text and
// as each frame's "locals" member in the JSON (docs/json-schema.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpython/stack_locals.h"
#include "cpython/stacks.h"

namespace hangpy::report {

// The lines printed under a frame: "      name = repr", or one line saying why there are none.
std::string format_frame_locals(const cpython::LocalsByFrame& locals, const cpython::PythonFrame& frame);

// Adds "locals" to each frame of a process_document() (json_report.h).
void add_locals(nlohmann::json& document, const cpython::ProcessStacks& stacks,
                const cpython::LocalsByFrame& locals);

}  // namespace hangpy::report
