// Recursion folded as Python's own tracebacks fold it (traceback.py shows a run of frames at one
// file, line and function three times, then "[Previous line repeated N more times]"): a thread
// 100,000 frames deep is a few lines, in text and in JSON, with the count kept.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpython/stacks.h"

namespace hangpy::report {

// Frames of a run shown before the rest are counted, and how a run is told (cpython/stacks.h).
using cpython::kRepeatsShown;
using cpython::repeats_previous;

// "  [Previous frame repeated 99997 more times]\n"
std::string repeated_frames_line(size_t more);

// Folds every thread's "frames" (outermost first) of a coreanalyze JSON document: of a run of
// frames with the same file, line, function and qualname, the first kRepeatsShown stay, the last
// of them with "repeated": the number of identical frames left out after it.
void fold_repeated_frames(nlohmann::json& document);

}  // namespace hangpy::report
