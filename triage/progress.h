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
//   busy   also when it wanted the CPU for that share of the time, whatever it got: runnable
//          (on the CPU or waiting in the run queue, as schedstat counts) on a crowded machine;
//   still  when its frames are the same and it used (almost) no CPU and moved no data;
//   new / gone when only one look has it.
// Threads that run no Python are left out: a process's progress is its Python's.
//
// A process's progress is that of its work threads, not of its helpers: a heartbeat, a logger, a
// metrics flusher, a progress bar or a watchdog ticks on while the main thread is deadlocked,
// and a pool's thread waiting for work says nothing. Helpers are told by their names and their
// functions (is_helper_thread); --must-move names the work threads instead.
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

// Which threads must move for their process to make progress.
struct ProgressRules {
  // By name ("main" is the main thread); empty: every thread but the helpers.
  std::vector<std::string> must_move;
};

// A helper thread: its name or its functions say heartbeat, watchdog, log, metrics, progress...,
// or it waits for work to come (a pool's idle thread). Never the main thread.
bool is_helper_thread(const ThreadRecord& thread);

struct ThreadMotion {
  std::optional<int64_t> native_thread_id;
  std::optional<std::string> name;
  Motion motion = Motion::kStill;
  bool works = true;   // one of the threads whose motion is the process's (not a helper)
  std::string before;  // where it was: "`recv` at train.py:42" (empty when new)
  std::string after;   // where it is (empty when gone)
  std::optional<double> cpu_share;  // CPU seconds per second between the looks, where known
  std::optional<double> runnable_share;  // the same, on the CPU or waiting for it (schedstat)
  std::string why;     // "other frames", "62% of a CPU in the same frames", ...
};

struct ProcessMotion {
  // Of its work threads: moved if one moved, came or went; else busy; else still.
  Motion motion = Motion::kStill;
  std::optional<double> seconds;   // between the looks, when both say when they were taken
  std::vector<ThreadMotion> threads;
  bool locals_compared = false;    // both looks hold locals: a loop's counter could show motion
  // Still, but a child of it (the same host, its parent PID) moved or is busy: a parent waiting
  // for children that work (multiprocessing's join, a pool's parent, torchrun's agent) is not
  // stuck. Their PIDs; set by note_moving_children.
  std::vector<int64_t> moving_children;
};

// One look's processes and their motions (parallel): each still process whose child moved or is
// busy gets moving_children.
void note_moving_children(const std::vector<const ProcessRecord*>& processes,
                          const std::vector<ProcessMotion*>& motions);

// "MainThread still; heartbeat moving (a helper)": the work threads that did not move, and the
// helpers that did, where some did; empty otherwise.
std::string helpers_moving_text(const ProcessMotion& motion);

// `before` and `after` are the same process (the caller matched them); `seconds_between` is used
// when the records do not say when they were taken (cores of a kernel, gcore).
ProcessMotion compare_looks(const ProcessRecord& before, const ProcessRecord& after,
                            std::optional<double> seconds_between = std::nullopt,
                            const ProgressRules& rules = {});

// The key that finds the same process in another look: its host and pid (its input without a pid).
std::string process_key(const ProcessRecord& process);

// The process's Python threads' innermost places, "`wait` at train.py:42; `run` at x.py:7": what
// a line about a stuck or busy process shows.
std::string python_places(const ProcessRecord& record, size_t most = 2);

}  // namespace hangpy::triage
