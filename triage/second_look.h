// A second look at a triaged job: each group of processes (an equivalence class of the merge)
// called stuck, busy or slow by how its members moved between the two looks (progress.h). One
// snapshot cannot tell a hung job from a slow one; two can.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "triage/merge.h"
#include "triage/progress.h"

namespace hangpy::triage {

// Each of the triage's processes compared with the same process in `later` (matched by host and
// pid), by index into triage.processes; absent when `later` lacks it (it ended).
std::map<int, ProcessMotion> motions_since(const Triage& triage, const std::vector<ProcessRecord>& later);

// One line per group: "ranks 0-2 (`all_reduce` at train.py:35): stuck: no thread moved in 10 s, 0%
// of a CPU"; "... slow: it moves (MainThread: on another line)". `seconds` is the time between the
// looks when the records do not say it.
std::vector<std::string> second_look_lines(const Triage& triage, const std::map<int, ProcessMotion>& motions);

}  // namespace hangpy::triage
