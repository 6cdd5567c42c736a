// The verdict: one line that names the odd processes out and where each group of processes is
// ("ranks 0-2,4-7 (7/8) in `all_reduce` at train.py:88; rank 3 (PID 4242) in `barrier` at
// train.py:120"), and the words shared by every renderer for processes and classes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "triage/merge.h"
#include "triage/place.h"

namespace hangpy::triage {

// "rank 3 (PID 4242 on node7)", "process 3 (PID 4242)": one process, by its rank where it has one,
// else by its input position.
std::string process_name(const Triage& triage, int process);

// A group of processes compactly: "ranks 0-2,4-7", "processes 0-3", "ranks 0-3 and processes
// 8,9"; a single process as process_name says.
std::string describe_processes(const Triage& triage, const std::vector<int>& members);

// What sets a class apart: its stack that the other classes of its role do not all share (the
// main thread's where it is one of those), where that stack is, and what its threads are blocked
// on when every member says the same (else the kind of wait they share).
struct ClassPlace {
  std::optional<StackId> stack;
  std::optional<Place> place;
  std::optional<std::string> blocked_on;
  bool asyncio_task = false;  // the stack is an asyncio task's: blocked_on is what it awaits
};
ClassPlace class_place(const Triage& triage, int class_index);

// The function a class's place calls when it is a torch.distributed collective (or a wait the
// diagnosis names as one: DDP's backward, the rendezvous), else "".
std::string collective_of(const ClassPlace& where);

// "ranks 0-2,4-7 (7/8) in `all_reduce` at train.py:88 (blocked on: lock)"; the fraction of its
// role's processes only `with_fraction`.
std::string describe_class(const Triage& triage, int class_index, bool with_fraction = true);

// Decides the verdict and marks the outlier classes. Classes are compared within their role (a
// DataLoader worker is not an odd training rank); the role with the most processes comes first.
Verdict decide_verdict(Triage& triage);

}  // namespace hangpy::triage
