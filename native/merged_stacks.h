// Every thread's merged stack (splice.h) from any source of one thread's native stack: a core's
// or a live process's libdwfl session, a snapshot's recorded stacks. And the native stacks of
// merged stacks as a snapshot records them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "base/error.h"
#include "cpython/stacks.h"
#include "native/native_frame.h"
#include "native/splice.h"

namespace hangpy::native {

// One thread's native stack by LWP, or why there is none.
using UnwindThread = std::function<Expected<NativeStack>(int64_t lwp)>;

// The merged stack of every Python thread with a known LWP and, with `all_threads`, the native
// stack of every thread that runs no Python; `only` (with `all_threads` false): those threads
// alone, by LWP. A thread `unwind` fails on gets its error instead of a stack.
MergedStacks merge_native_stacks(const UnwindThread& unwind, const cpython::ProcessStacks& stacks,
                                 bool all_threads, const std::set<int64_t>* only = nullptr);

// The native frames of `merged` as unwound, for a snapshot's note (recorded_stacks.h); a thread
// with an error is left out, so that a reader may try again.
std::vector<std::byte> recorded_native_stacks(const MergedStacks& merged);

}  // namespace hangpy::native
