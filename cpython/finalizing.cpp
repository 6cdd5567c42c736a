#include "cpython/finalizing.h"

namespace hangpy::cpython {

std::optional<uint64_t> read_finalizing_thread_state(const Target& target, const Layout& layout,
                                                     uint64_t runtime) {
  const RuntimeLayout& r = layout.runtime;
  std::optional<uint64_t> address;
  if (r.finalizing != kAbsent && runtime != 0) {
    address = runtime + static_cast<uint64_t>(r.finalizing);
  } else if (!r.finalizing_symbol.empty()) {
    address = target.find_symbol(r.finalizing_symbol);
  }
  if (!address) return std::nullopt;
  auto thread_state = read_pointer(target.memory(), *address);
  if (!thread_state) return std::nullopt;
  return *thread_state;
}

}  // namespace hangpy::cpython
