// coreanalyze's command line: options, their checks, and the help text.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "targets/core_target.h"
#include "cpython/stacks.h"

namespace hangpy::coreanalyze {

struct CommandLine {
  targets::CoreOptions core;  // core_path "-" means standard input
  std::optional<cpython::PythonVersion> python;
  std::optional<std::string> snapshot_path;
  bool json = false;
  bool native = false;      // --native (also set by --native-all)
  bool native_all = false;  // --native-all: threads that run no Python too
  bool inlined = false;     // --inlined: inlined functions in native stacks (also sets native)
  bool color = false;
  int context_lines = 0;  // --context N: source lines shown before and after each frame's line
  bool locals = false;      // --locals: each Python frame's arguments and local variables
  bool no_source = false;   // --no-source: no source file is opened
  bool tasks = true;        // asyncio's tasks, unless --no-tasks
  size_t max_tasks = 100000;  // --max-tasks: tasks read in full (the rest are counted)
  std::vector<int> pids;    // --pid: live processes instead of a core, analysed in turn
  bool nonblocking = false; // --nonblocking: read a live process without stopping it
  int max_stop_ms = 2000;   // --max-stop: longest a live process may be held stopped
  bool realtime = true;     // not --no-realtime: SCHED_FIFO while a live process is stopped
  int hold_stopped_ms = 0;  // --hold-stopped (hidden, for tests): keep it stopped this long more
  std::optional<std::string> coredumpctl_match;  // --coredumpctl MATCH: the core comes from there
};

// Parses and checks argv. Returns the exit code when the program should stop right away (help,
// version, or a usage error, which it has already reported in one line on stderr).
std::optional<int> parse_command_line(int argc, char** argv, CommandLine& line);

}  // namespace hangpy::coreanalyze
