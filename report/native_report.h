// Text and JSON of merged native + Python stacks (coreanalyze --native). Native frames are
// demangled here, at the formatting edge. Text is innermost first, as a debugger's backtrace;
// JSON is outermost first, as every other frame list of the document (docs/json-schema.md).
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cpython/stacks.h"
#include "native/splice.h"
#include "report/source_reader.h"
#include "report/stack_report.h"

namespace hangpy::report {

// "Stack (most recent call first):" and one numbered line per frame, innermost first.
std::string format_merged_stack(const native::MergedStack& stack, SourceReader* sources,
                                const TextStyle& style);

// Every Python thread with its merged stack (a thread whose LWP has no stack in `merged` gets its
// traceback); then, when `all_threads`, every thread that runs no Python with its native stack,
// else the one line naming them.
std::string format_process_native(const cpython::ProcessStacks& stacks, const native::MergedStacks& merged,
                                  SourceReader* sources, const TextStyle& style, bool all_threads,
                                  const diagnosis::ProcessDiagnosis* diagnosis = nullptr);

// One thread's "native_stack" member: frames outermost first.
nlohmann::json merged_stack_json(const native::MergedStack& stack);

// Adds "native_stack" to each thread of a process_document() (json_report.h) that has one in
// `merged`, Python threads and threads_without_python entries alike.
void add_native_stacks(nlohmann::json& document, const cpython::ProcessStacks& stacks,
                       const native::MergedStacks& merged);

}  // namespace hangpy::report
