// An ABRT problem directory (/var/spool/abrt/ccpp-...): one file per item. The core is the
// `coredump` file; `executable` (the executable's path) and `cmdline` help where the core lacks
// them.
#pragma once

#include <optional>
#include <string>

#include "base/error.h"

namespace hangpy::coreanalyze {

struct AbrtProblem {
  std::string coredump_path;
  std::optional<std::string> executable;  // the `executable` item
  std::optional<std::string> cmdline;     // the `cmdline` item
  std::optional<std::string> pid;
  std::optional<std::string> maps;
  std::optional<std::string> environment;  // the `environ` item: /proc/PID/environ, one a line
  std::optional<std::string> hostname;  // the `hostname` item: the machine that crashed  // the `maps` item: /proc/PID/maps at the crash
};

// Errors: kInvalidInput (no readable `coredump`: ABRT may have dropped it for space).
Expected<AbrtProblem> read_abrt_directory(const std::string& directory);

}  // namespace hangpy::coreanalyze
