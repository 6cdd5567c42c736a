// The PIDs of a process in another PID namespace (a container's, read from the host), in both
// namespaces: its own and its children's. Its system calls and its memory name processes by its
// namespace's ids (wait4(6), Popen.pid == 6), which mean nothing to the host, nor to a triage of
// host PIDs. Listed from a live process's /proc, written to and read from a snapshot core's note
// (symbols::kSnapshotNamespacePidsNoteType).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cpython/target.h"

namespace hangpy::targets {

// At most this many children are kept of one process (a pool has tens; a fork bomb, thousands).
inline constexpr size_t kMaxNamespaceChildren = 4096;

// The ids of a /proc/PID/status (or task/TID/status) file's NSpid line, the reader's /proc's
// namespace first, the innermost last; empty when the file or the line is missing.
std::vector<int64_t> nspid_ids(const std::string& status_path);

// Live process `pid`'s own ids, then its children's (a snapshot adds its threads'), where its innermost PID namespace is not the
// reader's (/proc/PID/status NSpid has more than one id); empty otherwise.
std::vector<cpython::NamespacePid> live_namespace_pids(int pid);

// The host PID of `namespace_pid` among `pids`; nullopt when it is none of them.
std::optional<int64_t> host_pid_of(const std::vector<cpython::NamespacePid>& pids, int64_t namespace_pid);

std::vector<std::byte> encode_namespace_pids(const std::vector<cpython::NamespacePid>& pids);
// Records past kMaxNamespaceChildren + 1, a record cut short and ids <= 0 are dropped.
std::vector<cpython::NamespacePid> decode_namespace_pids(std::span<const std::byte> desc);

}  // namespace hangpy::targets
