// Cores that hold zeros where the threads' stacks should be. gdb 13's gcore of a process on a
// newer glibc (2.43, Debian sid) was measured writing zeros for every thread's stack (the guard
// pages newer glibc keeps inside thread-stack mappings seem to make its read of the whole mapping
// fail: the cause is inferred, the zeros are measured). The walk then ends early on every thread
// ("null object pointer") with nothing to say why; this says why, once.
#pragma once

#include <optional>
#include <string>

#include "targets/core_file.h"

namespace hangpy::targets {

// One warning when the core saved the memory at some threads' stack pointers and it is all zeros
// there (a live stack never is: return addresses and saved registers sit just above the stack
// pointer); nullopt otherwise. Not for snapshots, which keep only the bytes an analysis read.
std::optional<std::string> zeroed_stacks_warning(const CoreFile& core);

}  // namespace hangpy::targets
