// The merge of many processes' stacks (issue 11): identical threads of a process fold into one
// stack with a count; every thread of every process goes into one prefix tree whose nodes count
// the threads and the processes through them (STAT's call-prefix tree); processes with the same
// set of stacks form an equivalence class. verdict.h then names the odd ones out.
#pragma once

#include <string>
#include <vector>

#include "triage/process_record.h"

namespace hangpy::triage {

using FrameId = int;
using StackId = int;

// The distinct stacks of one process, each with how many of its threads run it.
struct FoldedStack {
  StackId stack = 0;
  int count = 0;
  int tasks = 0;  // how many of `count` are asyncio tasks (ThreadRecord::asyncio_task)
  std::vector<size_t> threads;  // indices into ProcessRecord::threads, in the document's order
};

struct TreeNode {
  FrameId frame = -1;  // -1 for the root
  int parent = -1;
  int threads = 0;              // threads whose stacks pass through here (folded ones counted)
  int tasks = 0;                // how many of `threads` are asyncio tasks
  std::vector<int> processes;   // indices of the processes with such a thread, ascending
  std::vector<int> children;    // node indices, in the order first seen
};

struct EquivalenceClass {
  std::vector<int> processes;   // ascending; the first is the representative
  std::vector<StackId> stacks;  // the set of distinct stacks every member has
  std::optional<std::string> role;
  bool outlier = false;         // set by decide_verdict: not the majority of its role
};

struct Verdict {
  enum class Kind { kNothing, kAllAlike, kOutliers, kNoMajority };
  Kind kind = Kind::kNothing;
  // One short line per group: the odd ones out first, then the majority, then the idle; other
  // roles after. `text` is them joined with newlines, printed first.
  std::vector<std::string> lines;
  std::string text;
  // Ranks of the job that no process triaged is (triage/absent.h), and the size they are of.
  std::vector<int64_t> absent_ranks;
  int64_t world_size = 0;
};

struct Triage {
  std::vector<ProcessRecord> processes;      // in input order: index = "process N"
  bool native = false;                       // stacks are the native stacks with Python spliced in
  std::vector<Frame> frames;                 // every distinct frame, by FrameId
  std::vector<std::vector<FrameId>> stacks;  // every distinct stack, outermost first, by StackId
  std::vector<std::vector<FoldedStack>> folded;  // per process, in the order first seen
  std::vector<int> class_of;                 // per process: its index in `classes`
  std::vector<TreeNode> nodes;               // nodes[0] is the root
  std::vector<EquivalenceClass> classes;     // largest first
  Verdict verdict;
  std::vector<std::string> notes;            // facts about the merge itself (native left out...)
};

// The stack a thread contributes: native (with Python spliced in) when `native`, else Python.
const std::vector<Frame>& stack_frames(const ThreadRecord& thread, bool native);

// Folds, merges, classifies and decides the verdict. Native stacks are used when every process
// that has Python threads has them for every one (a mix would never share a prefix).
Triage merge(std::vector<ProcessRecord> processes);

}  // namespace hangpy::triage
