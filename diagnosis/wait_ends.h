// Where the waits between a process's threads end, for the verdict of one process (a core or
// --pid alone, as triage gives one for many). Each thread that waits for another thread of the
// process is followed owner by owner to a thread that waits for none of them: one that runs, or
// waits for something outside the threads (a child process, the other end of a pipe, a holder
// gone with a fork, a sleep). That thread is where the waiters' hang is decided. Threads in a
// cycle have no end (WaitCycle says so), and an idle worker's wait for work is no hang to follow.
#pragma once

#include <cstddef>
#include <vector>

#include "cpython/stacks.h"
#include "diagnosis/diagnosis.h"

namespace hangpy::diagnosis {

// A report names no more chains than this; the rest are counted (JSON lists them all).
inline constexpr size_t kMaxWaitChainsNamed = 4;

// One chain per thread that starts one (it waits for another thread, is not idle and not in a
// cycle, and no such thread waits for it), those that go on the same way merged; a thread that
// waits for no thread here but for a child, a pipe's other end or a holder gone with a fork is a
// chain of its own that ends outside. Longest first.
std::vector<WaitChain> find_wait_chains(const cpython::ProcessStacks& stacks,
                                        const ProcessDiagnosis& diagnosis);

}  // namespace hangpy::diagnosis
