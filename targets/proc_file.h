// Reading a file of /proc/PID whole: their size is unknown until read (stat says 0), so they are
// read to the end, up to a bound that no sane process reaches (a maps file of a million lines).
#pragma once

#include <optional>
#include <string>

namespace hangpy::coreanalyze {

// The file's bytes (at most 64 MiB); nullopt when it cannot be opened (errno says why).
std::optional<std::string> read_proc_file(const std::string& path);

}  // namespace hangpy::coreanalyze
