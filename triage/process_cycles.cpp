#include "triage/process_cycles.h"

#include <map>
#include <optional>

#include <fmt/format.h>

#include "base/printable.h"
#include "base/wait_graph.h"
#include "triage/place.h"
#include "triage/verdict.h"

namespace hangpy::triage {
namespace {

// The one process that can end a thread's wait, where the document says which and it is here.
std::optional<int> waker_of(const ThreadRecord& thread, const std::map<int64_t, int>& by_pid) {
  if (thread.idle || !thread.blocked_kind) return std::nullopt;
  std::optional<int64_t> pid;
  const std::string& kind = *thread.blocked_kind;
  if (kind == "child_process") pid = thread.child_pid;
  // A pipe whose other end several processes hold: any of them could end the wait, and a cycle
  // through one of them proves nothing.
  if ((kind == "read" || kind == "write") && thread.other_end_pids.size() == 1) pid = thread.other_end_pids.front();
  if (!pid) return std::nullopt;
  auto found = by_pid.find(*pid);
  if (found == by_pid.end()) return std::nullopt;
  return found->second;
}

std::string where(const ThreadRecord& thread) {
  std::optional<Place> place = place_of(thread.python_frames);
  return place ? " in " + format_place(*place) : std::string();
}

// "rank 3", "process 1": a process named again, its PID already said.
std::string short_name(const Triage& triage, int process) {
  if (auto rank = rank_of(triage.processes[process].labels)) return fmt::format("rank {}", *rank);
  return fmt::format("process {}", process);
}

std::string describe_wait(const Triage& triage, const ProcessWait& wait) {
  const ThreadRecord& thread = triage.processes[wait.process].threads[wait.thread];
  std::string who = process_name(triage, wait.process);
  // Another thread than the main one (a queue's feeder thread, whose end the process's exit
  // waits for): its name says which.
  if (!thread.main_thread && thread.name) who += fmt::format("'s thread \"{}\"", printable(*thread.name, 64));
  const std::string whom = short_name(triage, wait.waits_for);
  const std::string& kind = *thread.blocked_kind;
  if (kind == "child_process") return fmt::format("{} waits{} for {} to exit", who, where(thread), whom);
  if (kind == "write") return fmt::format("{} writes{} to a pipe only {} reads", who, where(thread), whom);
  return fmt::format("{} reads{} a pipe only {} writes to", who, where(thread), whom);
}

}  // namespace

std::vector<ProcessCycle> find_process_cycles(const Triage& triage) {
  std::map<int64_t, int> by_pid;
  for (size_t p = 0; p < triage.processes.size(); ++p)
    if (auto pid = triage.processes[p].labels.pid) by_pid.emplace(*pid, static_cast<int>(p));
  // One edge per pair of processes (the first thread that makes it), for the cycle search.
  std::vector<std::vector<size_t>> edges(triage.processes.size());
  std::map<std::pair<int, int>, size_t> thread_of_edge;
  for (size_t p = 0; p < triage.processes.size(); ++p) {
    const std::vector<ThreadRecord>& threads = triage.processes[p].threads;
    for (size_t t = 0; t < threads.size(); ++t) {
      std::optional<int> waker = waker_of(threads[t], by_pid);
      if (!waker || *waker == static_cast<int>(p)) continue;
      if (thread_of_edge.emplace(std::make_pair(static_cast<int>(p), *waker), t).second)
        edges[p].push_back(static_cast<size_t>(*waker));
    }
  }
  std::vector<ProcessCycle> cycles;
  for (const std::vector<size_t>& nodes : find_wait_cycles(edges)) {
    ProcessCycle cycle;
    for (size_t k = 0; k < nodes.size(); ++k) {
      const int from = static_cast<int>(nodes[k]), to = static_cast<int>(nodes[(k + 1) % nodes.size()]);
      cycle.waits.push_back({from, thread_of_edge.at({from, to}), to});
    }
    cycles.push_back(std::move(cycle));
  }
  return cycles;
}

std::string describe_process_cycle(const Triage& triage, const ProcessCycle& cycle) {
  std::vector<std::string> waits;
  for (const ProcessWait& wait : cycle.waits) waits.push_back(describe_wait(triage, wait));
  const std::string opening = cycle.waits.size() == 2 ? std::string("each waits for the other")
                                                      : fmt::format("{} processes wait in a circle", cycle.waits.size());
  return fmt::format("{}: {}", opening, fmt::join(waits, "; "));
}

}  // namespace hangpy::triage
