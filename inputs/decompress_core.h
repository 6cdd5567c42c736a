// A compressed core (zstd, lz4, xz, gzip) decompressed into a sparse temporary file, streamed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.h"
#include "inputs/input_format.h"

namespace hangpy::inputs {

struct DecompressedCore {
  std::string path;  // /proc/self/fd/N of the temporary file
  uint64_t compressed_bytes = 0;
  uint64_t core_bytes = 0;
  // "the xz data ends early: ..." when the compressed file was cut short; the core then holds
  // the prefix, which the core reader treats as a truncated core.
  std::optional<std::string> truncation;
};

// Errors: kIo (cannot read the input, cannot write the temporary file), kInvalidInput (corrupt
// data, named with `name`, the path the user gave).
Expected<DecompressedCore> decompress_core(const std::string& path, const std::string& name,
                                           InputFormat format);

}  // namespace hangpy::inputs
