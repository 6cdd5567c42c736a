// Programs `coreanalyze collect` runs (itself with --pid, gcore, srun, pdsh), several at a time,
// each killed when it outlives its time limit.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hangpy::jobs {

struct ChildCommand {
  // A constructor, not an aggregate: most callers name only the first fields, and CI's
  // -Werror=missing-field-initializers refuses a brace list that leaves the rest out.
  ChildCommand(std::vector<std::string> argv_in, std::optional<std::string> stdout_in = std::nullopt,
               bool capture_in = false, std::optional<std::string> stdin_in = std::nullopt)
      : argv(std::move(argv_in)), stdout_path(std::move(stdout_in)), capture(capture_in),
        stdin_path(std::move(stdin_in)) {}

  std::vector<std::string> argv;           // argv[0] is looked up in PATH
  std::optional<std::string> stdout_path;  // stdout into this file (created, truncated)
  bool capture = false;  // stderr (and stdout when no stdout_path) kept in the result, not shown
  std::optional<std::string> stdin_path;   // stdin from this file (else this program's)
};

struct ChildResult {
  int exit_code = -1;       // the program's exit status; 128+N when signal N ended it
  bool started = false;     // false: it could not be run at all (start_error says why)
  bool timed_out = false;   // killed (SIGKILL) at the time limit
  std::string start_error;
  std::string output;       // captured stdout (when capture and no stdout_path)
  std::string errors;       // captured stderr (when capture)
  double seconds = 0;
};

// Runs the commands, at most `parallel` at once, in order; results in the commands' order.
std::vector<ChildResult> run_children(const std::vector<ChildCommand>& commands, int parallel,
                                      std::chrono::milliseconds time_limit);

// One command, waited for.
ChildResult run_child(const ChildCommand& command, std::chrono::milliseconds time_limit);

// This program's own path (/proc/self/exe), which collect, watch and the triage run again as
// their children; "coreanalyze" when it cannot be read.
std::string this_program();

}  // namespace hangpy::jobs
