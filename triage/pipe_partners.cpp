#include "triage/pipe_partners.h"

#include <map>
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

}  // namespace

void match_pipe_ends(std::vector<ProcessRecord>& processes) {
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
