// `coreanalyze watch`'s command line: collect's selection and capture options, and when to decide.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobs/collect_options.h"

namespace hangpy::jobs {

struct WatchOptions {
  CollectOptions collect;       // which processes; how they are looked at and captured
  double interval_seconds = 10;  // between looks
  double after_seconds = 300;    // no progress this long is a hang
  bool any = false;              // one process without progress is enough (default: every one)
  bool busy_is_stuck = false;    // CPU burnt in the same frames counts as no progress
  std::optional<double> for_seconds;  // give up watching after this long (exit 0)
  std::optional<std::string> exec;    // run through /bin/sh after a capture
  bool quiet = false;            // no line per look
  // --must-move: the threads (by name; "main": the main thread) whose progress is the process's;
  // empty: every thread but the helpers (heartbeat, logging, metrics, watchdogs: triage/progress.h).
  std::vector<std::string> must_move;
};

// Parses `coreanalyze watch ARGS` (argv[0] is "watch"). Returns the exit code when the program
// should stop (help, or a usage error already reported in one line).
std::optional<int> parse_watch_options(int argc, char** argv, WatchOptions& options);

}  // namespace hangpy::jobs
