// The pipe ends a process holds (cpython::PipeEnd): listed from a live process's /proc, and
// written to and read from a snapshot core's note (symbols::kSnapshotPipesNoteType), so that a
// triage can match a pipe's two ends across processes, live or from snapshot cores alone.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "cpython/target.h"

namespace hangpy::targets {

// At most this many ends are kept of one process (a server may hold thousands of descriptors;
// the pipes of a hang are among a process's first ones).
inline constexpr size_t kMaxPipeEnds = 1024;

// The pipe ends of live process `pid`, by /proc/PID/fd and fdinfo; empty when /proc cannot be
// read. Descriptors opened read-write (a FIFO opened O_RDWR) are no one end and are left out.
std::vector<cpython::PipeEnd> live_pipe_ends(int pid);

std::vector<std::byte> encode_pipe_ends(const std::vector<cpython::PipeEnd>& ends);
// Records past kMaxPipeEnds, a record cut short and an end flag other than 0 or 1 are dropped.
std::vector<cpython::PipeEnd> decode_pipe_ends(std::span<const std::byte> desc);

}  // namespace hangpy::targets
