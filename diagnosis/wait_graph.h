// The wait-for graph of a process's threads and its cycles (deadlocks). Pure: nodes are thread
// indexes, each thread waits for at most one other (the owner of what it is blocked on).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace hangpy::diagnosis {

// `waits_for[i]`: the thread that thread i waits for, if known. Returns every cycle once, each
// starting at its smallest index and listed in wait order (i waits for the next, the last for the
// first), cycles ordered by their first index. A thread that waits for itself is a cycle of one.
std::vector<std::vector<size_t>> find_wait_cycles(const std::vector<std::optional<size_t>>& waits_for);

}  // namespace hangpy::diagnosis
