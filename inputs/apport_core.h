// The core inside an apport .crash file: its CoreDump field decoded from base64, decompressed
// (gzip, or zlib in old reports) and streamed to a sparse temporary file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.h"

namespace hangpy::inputs {

struct ApportCore {
  std::string path;  // /proc/self/fd/N of the temporary file
  uint64_t core_bytes = 0;
  std::optional<std::string> executable;  // ExecutablePath
  std::optional<std::string> proc_maps;   // ProcMaps (/proc/PID/maps at the crash)
  std::optional<std::string> environment; // ProcEnviron (the few variables apport keeps)
  std::optional<std::string> truncation;  // the CoreDump data ends early
};

// Errors: kIo, kInvalidInput (not an apport file, base64 garbage, corrupt gzip, no CoreDump).
Expected<ApportCore> read_apport_core(const std::string& path, const std::string& name);

}  // namespace hangpy::inputs
