// Reading a file of /proc/PID whole: their size is unknown until read (stat says 0), so they are
// read to the end, up to a bound that no sane process reaches (a maps file of a million lines).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace hangpy::targets {

// How many of a process's descriptors (/proc/PID/fd) are looked at: each costs a readlink.
inline constexpr size_t kMaxDescriptorsLooked = 4096;

// The file's bytes (at most 64 MiB); nullopt when it cannot be opened (errno says why).
std::optional<std::string> read_proc_file(const std::string& path);

// The fields of a /proc/PID/stat (or task/TID/stat) file after the command, which is in
// parentheses and may hold spaces and ')': [0] is the state letter (field 3), [1] the parent
// (field 4), [19] the start time (field 22). nullopt when the file cannot be read or parsed.
std::optional<std::vector<std::string>> read_proc_stat(const std::string& path);

}  // namespace hangpy::targets
