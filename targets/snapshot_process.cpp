#include "targets/snapshot_process.h"

#include <elf.h>

namespace hangpy::targets {

SnapshotProcess snapshot_process_of(const CoreFile& core) {
  SnapshotProcess process;
  process.machine = core.machine();
  process.threads = core.threads();
  process.facts.pid = core.pid().value_or(0);
  process.facts.command = core.command();
  process.facts.arguments = core.arguments();
  process.facts.signal = core.signal();
  process.facts.signal_info = core.signal_info();
  process.facts.parent_pid = core.parent_pid();
  process.facts.uid = core.uid();
  process.facts.gid = core.gid();
  process.facts.state = core.state();
  process.facts.taken_at = core.taken_at();
  process.facts.pipe_ends = core.pipe_ends();
  process.facts.socket_ends = core.socket_ends();
  process.facts.namespace_pids = core.namespace_pids();
  process.auxv = core.auxv();
  process.file_mappings = core.file_mappings();
  process.protection_at = [&core](uint64_t address) -> uint32_t {
    const CoreSegment* segment = core.segment_containing(address);
    return segment ? segment->flags : PF_R;
  };
  return process;
}

}  // namespace hangpy::targets
