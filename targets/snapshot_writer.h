// Writes a snapshot: a small ELF core holding only the pages an analysis read (from the core or
// from the mapped files behind it) plus the original process notes and the symbol addresses used.
// `coreanalyze --snapshot OUT CORE` makes one from a core, `coreanalyze --pid PID --snapshot OUT`
// from a live process (its pages as read while it was stopped); the test corpus and the bundled example are such
// snapshots, so they read the same on any machine, without the interpreter's binaries.
#pragma once

#include <string>

#include "base/error.h"
#include "targets/snapshot_process.h"
#include "cpython/recording_target.h"

namespace hangpy::targets {

Expected<void> write_snapshot(const std::string& path, const SnapshotProcess& process,
                              const cpython::RecordingTarget& recorded);

}  // namespace hangpy::targets
