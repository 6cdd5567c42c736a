// `coreanalyze --coredumpctl MATCH`: the core systemd-coredump kept for MATCH (a PID, a program
// name, ... as coredumpctl takes it), written by `coredumpctl dump MATCH --output=FILE`.
#pragma once

#include <string>

#include "base/error.h"

namespace hangpy::inputs {

// The path of a temporary file holding the core (already unlinked: /proc/self/fd/N). Errors:
// kNotFound (no coredumpctl on this machine), kInvalidInput (coredumpctl found no core, or
// failed: its own last line of stderr says why).
Expected<std::string> core_from_coredumpctl(const std::string& match);

}  // namespace hangpy::inputs
