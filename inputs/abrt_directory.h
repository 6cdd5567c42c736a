// An ABRT problem directory (/var/spool/abrt/ccpp-...): one file per item. The core is the
// `coredump` file; `executable` (the executable's path) and `cmdline` help where the core lacks
// them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace hangpy::inputs {

struct AbrtProblem {
  std::string coredump_path;
  std::optional<std::string> executable;  // the `executable` item
  std::optional<std::string> cmdline;     // the `cmdline` item
  std::optional<std::string> pid;
  std::optional<std::string> maps;
  std::optional<std::string> environment;  // the `environ` item: /proc/PID/environ, one a line
  std::optional<std::string> hostname;  // the `hostname` item: the machine that crashed
  // The `open_fds` item: each descriptor the process had open, "FD:PATH" then its fdinfo lines.
  std::optional<std::string> open_fds;
};

// The descriptors of an `open_fds` item: fd -> what it was (a path, "pipe:[1234]",
// "socket:[5678]"), escaped for the terminal (the text comes from the crashed process's files).
// Lines that are not "FD:PATH" (fdinfo's "pos:", "flags:"...) are skipped.
std::map<int64_t, std::string> parse_abrt_open_fds(std::string_view text);

// Errors: kInvalidInput (no readable `coredump`: ABRT may have dropped it for space).
Expected<AbrtProblem> read_abrt_directory(const std::string& directory);

}  // namespace hangpy::inputs
