// The wait-for graph and its cycles (deadlocks), for threads, asyncio tasks and processes alike.
// Pure: nodes are indexes; an edge i -> j says that i waits for j (the owner of the lock a thread
// is blocked on; the task a task awaits, the children of its gather, the holder of its
// asyncio.Lock; the child a process waits for, the reader of the pipe it writes).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace hangpy {

// Bounds on the search: a graph read from a damaged process may be large and dense.
inline constexpr size_t kMaxCycleLength = 256;
inline constexpr size_t kMaxCyclesReported = 64;

// `waits_for[i]`: the nodes node i waits for. Returns every cycle once (up to the bounds), each
// starting at its smallest node and listed in wait order (each waits for the next, the last for
// the first), cycles in lexicographic order. A node that waits for itself is a cycle of one.
// Edges to nodes out of range are ignored.
std::vector<std::vector<size_t>> find_wait_cycles(const std::vector<std::vector<size_t>>& waits_for);

// The same for a graph in which each node waits for at most one other (threads).
std::vector<std::vector<size_t>> find_wait_cycles(const std::vector<std::optional<size_t>>& waits_for);

}  // namespace hangpy
