// What every picture of a triage shares: the merged tree with its single-child chains drawn as
// one box (a stack of 30 frames that 8 processes share is one box, not 30), the words on boxes
// and edges, and the colours of the classes.
#pragma once

#include <string>
#include <vector>

#include "triage/merge.h"

namespace hangpy::report {

struct TriageBox {
  std::vector<int> nodes;     // tree nodes, outermost first; each but the last has one child
  int parent = -1;            // box index, -1 for the top box (the root)
  std::vector<int> children;  // box indices, the most processes first
  int class_index = -1;       // the one class all its processes belong to, else -1
  bool outlier = false;       // only outlier processes pass here, and not through its parent
};

// Boxes of the tree, boxes[0] holding the root alone.
std::vector<TriageBox> triage_boxes(const triage::Triage& triage);

// "`all_reduce` at train.py:88" (Python), "`futex_wait` in libc.so.6" (native).
std::string frame_label(const triage::Frame& frame);
// "7 threads", "3 asyncio tasks", "2 threads, 3 asyncio tasks" (`threads_and_tasks` counts both).
std::string count_threads_and_tasks(int threads_and_tasks, int tasks);
// "7 threads: ranks 0-2,4-7" (the threads through a node, and its processes); asyncio tasks are
// counted apart: "3 asyncio tasks: processes 0-2".
std::string node_label(const triage::Triage& triage, const triage::TreeNode& node);

// A colour per class (#rrggbb), told apart on screen and in print; outliers get kOutlierColour
// on their borders.
std::string class_colour(int class_index);
inline constexpr const char* kOutlierColour = "#d62728";
// The threads (or asyncio tasks) of one folded stack named in the text and in the JSON; a server
// with 20,000 tasks alike gets a count, not 20,000 names.
inline constexpr size_t kMaxTextNames = 8;
inline constexpr size_t kMaxJsonNames = 64;
inline constexpr const char* kSharedColour = "#555555";  // a box of several classes

}  // namespace hangpy::report
