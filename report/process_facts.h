// What the core says about the process besides its stacks, for the report's header and --json:
// its parent, owner and state, the signal that made the core with its sender or fault address,
// and whether the interpreter was shutting down.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cpython/stacks.h"
#include "cpython/target.h"

namespace hangpy::report {

// "SIGABRT", or "signal 64" for a number without a name.
std::string signal_name(int number);

// "SIGABRT (6), sent by kill() from PID 12 (UID 0)", "SIGSEGV (11), fault at 0x0 (address not
// mapped)", "SIGSTOP (19)".
std::string describe_signal(const cpython::SignalInfo& signal);

// The header lines after "Process PID (comm), Python X (source)", each ending in '\n': parent,
// owner, state and signal; the interpreter finalizing. Empty when the target knows none of it.
std::string format_process_facts(const cpython::ProcessInfo& process,
                                 const cpython::ProcessStacks& stacks);

// Adds parent_pid, uid, gid, state, signal_info, finalizing and finalizing_thread to the
// document's "process" object (docs/json-schema.md).
void add_process_facts(nlohmann::json& process_json, const cpython::ProcessInfo& process,
                       const cpython::ProcessStacks& stacks);

}  // namespace hangpy::report
