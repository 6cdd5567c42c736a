// Text and JSON of the diagnosis (diagnosis/): the deadlock lines that open a report, and each
// thread's state and "blocked on" line. Shared by coreanalyze and the gdb commands.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cpython/stacks.h"
#include "diagnosis/diagnosis.h"

namespace hangpy::report {

// One "deadlock: ..." line per cycle, then "no GIL" once for a free-threaded process without one.
std::string format_process_diagnosis(const diagnosis::ProcessDiagnosis& diagnosis);

// "  State: main thread, holds the GIL, in futex(0x7f…)\n  Blocked on: ...\n" (indented lines).
std::string format_thread_diagnosis(const diagnosis::ThreadDiagnosis& thread,
                                    const cpython::ProcessStacks& stacks);

// "state" and "blocked_on" of each thread, "deadlocks" and "gil" of the process, added to a
// process_document() (docs/json-schema.md).
void add_diagnosis(nlohmann::json& document, const cpython::ProcessStacks& stacks,
                   const diagnosis::ProcessDiagnosis& diagnosis);

}  // namespace hangpy::report
