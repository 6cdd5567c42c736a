// Files coreanalyze writes (snapshots): never one of its inputs, never left half-written.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "base/error.h"

namespace hangpy {

// kInvalidInput when `path` is one of `inputs` as a file (same device and inode, so a symlink or
// hard link to an input counts); a path that does not exist yet is fine.
Expected<void> check_not_an_input(const std::string& path, const std::vector<std::string>& inputs);

// Writes `path` through a temporary file beside it that is renamed over it once `write` is done:
// a failure (full disk, no permission) leaves what was at `path` untouched. Errors are kIo with
// the system's reason. The file is made readable by its owner only (0600).
Expected<void> write_file_atomically(const std::string& path,
                                     const std::function<void(std::ostream&)>& write);

}  // namespace hangpy
