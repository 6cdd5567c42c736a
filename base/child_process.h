// Other programs, run the one way every layer runs them: `coreanalyze collect`'s (itself with
// --pid, gcore, srun, pdsh), the triage's coreanalyze --json children, Graphviz's dot,
// coredumpctl; several at a time where asked, each in a process group of its own and killed (the
// group) when it outlives its time limit. Captured streams are anonymous files (anonymous_file.h):
// nothing has to drain them while several children run, and none leaks into another thread's
// child (close-on-exec).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hangpy {

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
  int stdin_fd = -1;                       // or from this descriptor (read from its offset)
  bool stdout_to_null = false;             // stdout to /dev/null (when no stdout_path)
  std::string program;  // the file to run, when argv[0] is only its name for the child
};

struct ChildResult {
  int exit_code = -1;       // the program's exit status; 128+N when signal N ended it
  bool started = false;     // false: it could not be run at all (start_error says why)
  bool timed_out = false;   // killed (SIGKILL) at the time limit
  std::string start_error;
  std::string output;       // captured stdout (when capture and no stdout_path)
  std::string errors;       // captured stderr (when capture)
  int signal = 0;           // the signal that ended it, if one did
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

}  // namespace hangpy
