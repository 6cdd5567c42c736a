// What a snapshot core records of its process besides memory: the threads' registers, the
// process notes, the auxiliary vector, the mapped files and each page's protection. Taken from a
// core (snapshot of a core) or from a live process held stopped (snapshot of --pid), so that one
// writer makes both.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "targets/core_file.h"
#include "cpython/target.h"

namespace hangpy::targets {

struct SnapshotProcess {
  cpython::Machine machine = cpython::kHostMachine;  // the core's e_machine
  std::vector<CoreThread> threads;
  cpython::ProcessInfo facts;  // pid, command, arguments, signal, parent, owner, state
  std::vector<std::pair<uint64_t, uint64_t>> auxv;
  std::vector<FileMapping> file_mappings;
  // PF_R | PF_W | PF_X of the mapping holding an address (PF_R when unknown).
  std::function<uint32_t(uint64_t)> protection_at;
  // The label variables of its environment (symbols::kSnapshotLabelsNoteType), none of the rest:
  // name -> value, as cpython::Environment has them (a snapshot knows nothing of the report).
  std::map<std::string, std::string> label_variables;
  // The native stacks unwound, encoded (native/recorded_stacks.h); none when nothing was unwound.
  std::vector<std::byte> native_stacks;
};

// The process as a core recorded it (`core` must outlive the result).
SnapshotProcess snapshot_process_of(const CoreFile& core);

}  // namespace hangpy::targets
