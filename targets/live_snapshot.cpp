#include "targets/live_snapshot.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

#include "targets/namespace_pids.h"
#include "targets/proc_file.h"
#include "targets/proc_maps.h"

namespace hangpy::targets {
namespace {

std::vector<std::pair<uint64_t, uint64_t>> read_auxv(int64_t pid) {
  std::vector<std::pair<uint64_t, uint64_t>> auxv;
  auto bytes = read_proc_file(fmt::format("/proc/{}/auxv", pid));
  if (!bytes) return auxv;
  for (size_t at = 0; at + 16 <= bytes->size(); at += 16) {
    uint64_t entry[2];
    std::memcpy(entry, bytes->data() + at, sizeof entry);
    if (entry[0] == AT_NULL) break;
    auxv.emplace_back(entry[0], entry[1]);
  }
  return auxv;
}

}  // namespace

SnapshotProcess live_snapshot_process(const cpython::ProcessInfo& facts,
                                      const std::vector<StoppedProcess::RegisterSet>& stopped,
                                      const std::vector<cpython::NativeThread>& threads) {
  SnapshotProcess process;
  process.facts = facts;
  // A container's process: its threads' ids in its namespace too, which its thread states hold
  // (where no thread pointer is known to match them by: aarch64, a thread read unstopped).
  if (!process.facts.namespace_pids.empty()) {
    for (const cpython::NativeThread& thread : threads)
      if (thread.namespace_lwp && thread.lwp != facts.pid && process.facts.namespace_pids.size() <= kMaxNamespaceChildren)
        process.facts.namespace_pids.push_back({thread.lwp, *thread.namespace_lwp});
  }
  for (const auto& set : stopped) {
    CoreThread thread{set.lwp, 0, set.registers};
    // A thread read in its system call has no thread pointer of its own: the pthread_t found for
    // it (thread_pointers.h), which `threads` holds, is written as x86-64's fs_base. (aarch64's
    // tpidr_el0 lies past the struct pthread, at an offset only the C library knows.)
    for (const cpython::NativeThread& known : threads) {
      if (known.lwp != set.lwp) continue;
      if (thread.registers.pthread_self() == 0) thread.registers.set_pthread_self(known.fs_base);
      thread.cpu_seconds = known.cpu_seconds;
    }
    process.threads.push_back(thread);
  }
  if (stopped.empty()) {
    for (const cpython::NativeThread& thread : threads) {
      CoreThread known{thread.lwp, 0, {}};
      known.registers.machine = thread.machine;
      known.registers.set_pc(thread.pc);
      known.registers.set_sp(thread.sp);
      known.registers.set_syscall(thread.syscall, thread.syscall_arguments);
      known.registers.set_pthread_self(thread.fs_base);
      known.cpu_seconds = thread.cpu_seconds;
      process.threads.push_back(known);
    }
  }
  process.auxv = read_auxv(facts.pid);
  const std::string maps =
      read_proc_file(fmt::format("/proc/{}/maps", facts.pid)).value_or(std::string());
  process.file_mappings = parse_proc_maps(maps);
  process.protection_at = [ranges = parse_proc_map_ranges(maps)](uint64_t address) -> uint32_t {
    auto after = std::upper_bound(ranges.begin(), ranges.end(), address,
                                  [](uint64_t a, const MappedRange& r) { return a < r.start; });
    if (after == ranges.begin()) return PF_R;
    const MappedRange& range = *std::prev(after);
    return address < range.end ? range.protection : PF_R;
  };
  return process;
}

}  // namespace hangpy::targets
