#include "triage/pipe_partners.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

namespace hangpy::triage {
namespace {

using Host = std::string;

// The processes holding each end: an inode names a pipe, and a pair of addresses a connection,
// on one machine only.
struct Holders {
  std::map<std::tuple<Host, uint64_t, bool>, std::set<int64_t>> pipes;            // (host, inode, read end)
  std::map<std::tuple<Host, std::string, std::string>, std::set<int64_t>> sockets;  // (host, local, remote)
};

Holders holders_of(const std::vector<ProcessRecord>& processes) {
  Holders holders;
  for (const ProcessRecord& process : processes) {
    if (!process.labels.pid) continue;
    const Host host = process.labels.host.value_or("");
    for (const PipeEndRecord& end : process.pipe_ends)
      holders.pipes[{host, end.inode, end.read_end}].insert(*process.labels.pid);
    for (const SocketEndRecord& end : process.socket_ends)
      holders.sockets[{host, end.local, end.remote}].insert(*process.labels.pid);
  }
  return holders;
}

// The other processes holding the other end of `fd` of `process`; empty when none is known.
std::set<int64_t> other_end(const Holders& holders, const ProcessRecord& process, int64_t fd) {
  const Host host = process.labels.host.value_or("");
  for (const PipeEndRecord& end : process.pipe_ends) {
    if (end.fd != fd) continue;
    auto found = holders.pipes.find({host, end.inode, !end.read_end});
    return found == holders.pipes.end() ? std::set<int64_t>{} : found->second;
  }
  for (const SocketEndRecord& end : process.socket_ends) {
    if (end.fd != fd) continue;
    auto found = holders.sockets.find({host, end.remote, end.local});
    return found == holders.sockets.end() ? std::set<int64_t>{} : found->second;
  }
  return {};
}

// A child writing its fd 1 or 2 while its parent, here, waits for it in subprocess's wait with
// that descriptor on a pipe it reads (Popen.stdout, .stderr): the parent holds the read end. A
// core holds no descriptor table; the parent's Popen object says so. Returns the parent's PID.
std::optional<int64_t> popen_reader(const std::vector<ProcessRecord>& processes, const ProcessRecord& child,
                                    int64_t fd) {
  if (!child.labels.ppid || !child.labels.pid) return std::nullopt;
  for (const ProcessRecord& parent : processes) {
    if (parent.labels.pid != child.labels.ppid || parent.labels.host != child.labels.host) continue;
    for (const ThreadRecord& thread : parent.threads) {
      if (thread.blocked_kind != "child_process" || thread.child_pid != child.labels.pid) continue;
      if (std::find(thread.child_pipe_fds.begin(), thread.child_pipe_fds.end(), fd) != thread.child_pipe_fds.end())
        return parent.labels.pid;
    }
  }
  return std::nullopt;
}

}  // namespace

void match_pipe_ends(std::vector<ProcessRecord>& processes) {
  for (ProcessRecord& process : processes) {
    for (ThreadRecord& thread : process.threads) {
      if (thread.blocked_kind != "write" || !thread.blocked_fd || !thread.other_end_pids.empty()) continue;
      // Only where no descriptor table says otherwise (a process whose ends are listed is
      // matched below, by inode).
      if (!process.pipe_ends.empty() || (*thread.blocked_fd != 1 && *thread.blocked_fd != 2)) continue;
      if (auto reader = popen_reader(processes, process, *thread.blocked_fd)) thread.other_end_pids.push_back(*reader);
    }
  }
  const Holders holders = holders_of(processes);
  if (holders.pipes.empty() && holders.sockets.empty()) return;
  for (ProcessRecord& process : processes) {
    if (!process.labels.pid) continue;
    for (ThreadRecord& thread : process.threads) {
      if (!thread.blocked_fd || !thread.other_end_pids.empty()) continue;
      if (thread.blocked_kind != "read" && thread.blocked_kind != "write" && thread.blocked_kind != "socket") continue;
      for (int64_t pid : other_end(holders, process, *thread.blocked_fd))
        if (pid != *process.labels.pid) thread.other_end_pids.push_back(pid);
    }
  }
}

}  // namespace hangpy::triage
