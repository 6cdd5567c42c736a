// What the reports show of a Python frame's source: its line with a caret line under the running
// expression (3.11 on, from the frame's columns, as tracebacks draw it), or with --context N the
// lines around it, the current one marked. Shared by the text formatters and --json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpython/stacks.h"
#include "report/source_reader.h"

namespace hangpy::report {

// Spaces up to the frame's expression in `raw_line` (the untrimmed source line), then one '^'
// per character of it, up to the end of the line when the expression goes on. nullopt when the
// frame has no columns, they do not fit the line, or the carets would mark the whole line
// (tracebacks leave them out then too).
std::optional<std::string> caret_marks(const cpython::PythonFrame& frame,
                                       const std::string& raw_line);

// The text under a frame's `File "...", line N, in f` line: "    <source>\n" and its caret line,
// or with `context_lines` > 0 that many lines before and after, numbered, the current one marked
// with '>'. Empty when the source cannot be read.
// `carets` false leaves the caret line out (gdb's py-bt, to print what libpython.py prints).
std::string format_frame_source(const cpython::PythonFrame& frame, SourceReader* sources,
                                int context_lines, bool carets = true);

// --json's "context" of a frame: [{"line": N, "text": "...", "current": bool}, ...], or null
// when the source cannot be read.
nlohmann::json context_json(const cpython::PythonFrame& frame, SourceReader& sources,
                            int context_lines);

// Sets "context" on every frame of a process_document() (threads and frames in its order).
void add_source_context(nlohmann::json& document, const cpython::ProcessStacks& stacks,
                        SourceReader& sources, int context_lines);

}  // namespace hangpy::report
