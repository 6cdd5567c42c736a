#include "triage/pipe_partners.h"

#include <map>
#include <set>
#include <string>
#include <tuple>

namespace hangpy::triage {

void match_pipe_ends(std::vector<ProcessRecord>& processes) {
  // (host, inode, read end) -> the PIDs holding it: an inode names a pipe on one machine only.
  std::map<std::tuple<std::string, uint64_t, bool>, std::set<int64_t>> holders;
  for (const ProcessRecord& process : processes) {
    if (!process.labels.pid) continue;
    for (const PipeEndRecord& end : process.pipe_ends)
      holders[{process.labels.host.value_or(""), end.inode, end.read_end}].insert(*process.labels.pid);
  }
  if (holders.empty()) return;
  for (ProcessRecord& process : processes) {
    if (!process.labels.pid) continue;
    for (ThreadRecord& thread : process.threads) {
      if (!thread.blocked_fd || !thread.other_end_pids.empty()) continue;
      if (thread.blocked_kind != "read" && thread.blocked_kind != "write") continue;
      for (const PipeEndRecord& end : process.pipe_ends) {
        if (end.fd != *thread.blocked_fd) continue;
        auto others = holders.find({process.labels.host.value_or(""), end.inode, !end.read_end});
        if (others == holders.end()) break;
        for (int64_t pid : others->second)
          if (pid != *process.labels.pid) thread.other_end_pids.push_back(pid);
        break;
      }
    }
  }
}

}  // namespace hangpy::triage
