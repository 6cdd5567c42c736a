// Whether the process a live analysis began with is still that process: a process that exits, is
// reaped and has its PID reused, or runs exec while it is read makes reads fail in ways that look
// like other causes ("no Python interpreter found", "not permitted"). Compared before and after a
// failure, so that the user is told what really happened.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hangpy::targets {

struct ProcessIdentity {
  uint64_t start_time = 0;  // /proc/PID/stat's starttime: a reused PID has another
  std::string executable;   // /proc/PID/exe's link: exec changes it
  // /proc/PID/auxv: exec of the same binary keeps the link and the start time, but the kernel
  // writes a new auxiliary vector (AT_RANDOM's address, the loader's and, for a PIE, the
  // program's base, all placed anew); empty when it cannot be read.
  std::string auxiliary_vector;
};

// nullopt when /proc/PID is gone or cannot be read.
std::optional<ProcessIdentity> process_identity(int pid);

// One line when the process is no longer the one `before` described: "process 42 exited during the
// analysis", "... ran exec (now /usr/bin/true) during the analysis"; nullopt when it is the same
// (or `before` was not known).
std::optional<std::string> process_change(int pid, const std::optional<ProcessIdentity>& before);

}  // namespace hangpy::targets
