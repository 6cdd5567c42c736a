// libFuzzer target: telling an input's format from its first bytes (format_of_file_start), and
// the same through format_of_path on the bytes as a file (the probe's read of a short file).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "inputs/input_format.h"
#include "fuzz/memory_file.h"

using namespace ::hangpy::inputs;

using namespace hangpy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  const auto from_head = inputs::format_of_file_start(bytes.first(std::min(size, inputs::kFormatProbeBytes)));
  (void)inputs::format_name(from_head);
  fuzz::MemoryFile file(data, size);
  if (!file.ok()) return 0;
  auto from_path = inputs::format_of_path(file.path());
  // The same bytes are the same format, whether they come as a span or as a file.
  if (from_path && *from_path != from_head) __builtin_trap();
  return 0;
}
