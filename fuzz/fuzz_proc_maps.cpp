// libFuzzer target: /proc/PID/maps text (ABRT `maps`, apport ProcMaps) from any bytes. What the
// parser keeps must be what it promises: file-backed mappings with a path and start < end.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "targets/proc_maps.h"

using namespace ::hangpy::targets;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto& mapping : hangpy::targets::parse_proc_maps(text)) {
    if (mapping.path.empty() || mapping.path.size() > size || mapping.end <= mapping.start) __builtin_trap();
  }
  return 0;
}
