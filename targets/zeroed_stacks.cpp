#include "targets/zeroed_stacks.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace hangpy::targets {
namespace {

// Bytes read at each stack pointer: the innermost frame's saved registers and return address.
constexpr size_t kBytesChecked = 256;
constexpr size_t kThreadsNamed = 8;

}  // namespace

std::optional<std::string> zeroed_stacks_warning(const CoreFile& core) {
  std::vector<int64_t> zeroed;
  size_t saved = 0;  // threads whose stack memory the core holds
  for (const CoreThread& thread : core.threads()) {
    const uint64_t sp = thread.registers.native_thread(thread.lwp, false).sp;
    const CoreSegment* segment = core.segment_containing(sp);
    if (segment == nullptr || sp - segment->vaddr + kBytesChecked > segment->filesz) continue;
    std::array<std::byte, kBytesChecked> bytes{};
    if (!core.read(sp, bytes)) continue;
    ++saved;
    if (std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; }))
      zeroed.push_back(thread.lwp);
  }
  if (zeroed.empty()) return std::nullopt;
  std::vector<int64_t> named(zeroed.begin(), zeroed.begin() + std::min(zeroed.size(), kThreadsNamed));
  return fmt::format(
      "this core holds only zeros at the stack pointer of {} of its {} threads (LWP {}{}): the "
      "writer could not read their stacks (gdb's gcore on a newer glibc does this), so their "
      "frames end early; a kernel core, or coreanalyze --pid --snapshot, has them",
      zeroed.size(), saved, fmt::join(named, ", "), zeroed.size() > named.size() ? ", ..." : "");
}

}  // namespace hangpy::targets
