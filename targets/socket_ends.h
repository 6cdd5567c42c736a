// The connected TCP sockets a process holds (cpython::SocketEnd): listed from a live process's
// /proc, and written to and read from a snapshot core's note (symbols::kSnapshotSocketsNoteType),
// so that a triage can tell which process holds the other end of the connection a thread waits on.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "cpython/target.h"

namespace hangpy::targets {

// At most this many are kept of one process (a server may hold thousands of connections).
inline constexpr size_t kMaxSocketEnds = 1024;

// The connected TCP sockets of live process `pid` (/proc/PID/fd, then /proc/PID/net/tcp and
// tcp6, each read once); empty when /proc cannot be read. Listening sockets are left out.
std::vector<cpython::SocketEnd> live_socket_ends(int pid);

std::vector<std::byte> encode_socket_ends(const std::vector<cpython::SocketEnd>& ends);
// Lines that do not parse, addresses longer than an address can be, and lines past kMaxSocketEnds
// are dropped.
std::vector<cpython::SocketEnd> decode_socket_ends(std::span<const std::byte> desc);

}  // namespace hangpy::targets
