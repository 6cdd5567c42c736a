// `coreanalyze -`: a core on standard input. The core reader maps its file, so a regular file
// redirected to stdin is used in place, and a pipe (`zstd -dc core.zst | coreanalyze -`) is first
// copied to an unnamed temporary file, with its zero pages left as holes.
#pragma once

#include <string>

#include "base/error.h"

namespace hangpy::inputs {

// A path that opens the core stdin carries (/proc/self/fd/N); it stays valid for the life of the
// process. Errors: kInvalidInput when stdin is a terminal or cannot be mapped in any way, kIo
// when the copy fails (disk full: the message says so).
Expected<std::string> core_path_from_stdin();

}  // namespace hangpy::inputs
