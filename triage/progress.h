// Two looks at the same process compared, thread by thread: did it make progress between them?
// The watch (coreanalyze watch) and the diff (coreanalyze diff) decide "stuck", "slow" and "busy"
// from this, so that one rule serves a live job and two snapshot sets taken on a cluster.
//
// A thread
//   moved  when its Python frames changed (other functions, or another line at low CPU), a
//          local's value changed in them (a loop that sleeps on the same line each step), or it
//          read or wrote through system calls between the looks (a slow download is not stuck);
//   busy   when it stayed in the same functions burning CPU (a spin loop, a long C call that
//          computes: not progress-free, and not what a hang looks like);
//   still  when its frames are the same and it used (almost) no CPU and moved no data;
//   new / gone when only one look has it.
// Threads that run no Python are left out: a process's progress is its Python's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "triage/process_record.h"

namespace hangpy::triage {

enum class Motion { kMoved, kBusy, kStill, kNew, kGone };

// "moved", "busy", "still", "new", "gone"
const char* motion_name(Motion motion);

// A thread that uses this share of one CPU or more between two looks in the same frames is busy.
inline constexpr double kBusyCpuShare = 0.2;

struct ThreadMotion {
  std::optional<int64_t> native_thread_id;
  std::optional<std::string> name;
  Motion motion = Motion::kStill;
  std::string before;  // where it was: "`recv` at train.py:42" (empty when new)
  std::string after;   // where it is (empty when gone)
  std::optional<double> cpu_share;  // CPU seconds per second between the looks, where known
  std::string why;     // "other frames", "62% of a CPU in the same frames", ...
};

struct ProcessMotion {
  Motion motion = Motion::kStill;  // moved if a thread moved, came or went; else busy; else still
  std::optional<double> seconds;   // between the looks, when both say when they were taken
  std::vector<ThreadMotion> threads;
};

// `before` and `after` are the same process (the caller matched them); `seconds_between` is used
// when the records do not say when they were taken (cores of a kernel, gcore).
ProcessMotion compare_looks(const ProcessRecord& before, const ProcessRecord& after,
                            std::optional<double> seconds_between = std::nullopt);

// The key that finds the same process in another look: its host and pid (its input without a pid).
std::string process_key(const ProcessRecord& process);

// The process's Python threads' innermost places, "`wait` at train.py:42; `run` at x.py:7": what
// a line about a stuck or busy process shows.
std::string python_places(const ProcessRecord& record, size_t most = 2);

}  // namespace hangpy::triage
