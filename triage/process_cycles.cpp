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
  if ((kind == "read" || kind == "write" || kind == "socket") && thread.other_end_pids.size() == 1)
    pid = thread.other_end_pids.front();
  if (!pid) return std::nullopt;
  auto found = by_pid.find(*pid);
  if (found == by_pid.end()) return std::nullopt;
  return found->second;
}

std::string in_its_place(const ThreadRecord& thread) {
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
  if (kind == "child_process") return fmt::format("{} waits{} for {} to exit", who, in_its_place(thread), whom);
  if (kind == "write") return fmt::format("{} writes{} to a pipe only {} reads", who, in_its_place(thread), whom);
  if (kind == "socket")
    return fmt::format("{} waits{} on a connection whose other end only {} holds", who, in_its_place(thread), whom);
  return fmt::format("{} reads{} a pipe only {} writes to", who, in_its_place(thread), whom);
}

// One edge per process: its first thread, not idle, whose wait only another process can end.
std::vector<std::optional<ProcessWait>> process_edges(const Triage& triage) {
  std::map<int64_t, int> by_pid;
  for (size_t p = 0; p < triage.processes.size(); ++p)
    if (auto pid = triage.processes[p].labels.pid) by_pid.emplace(*pid, static_cast<int>(p));
  std::vector<std::optional<ProcessWait>> edges(triage.processes.size());
  for (size_t p = 0; p < triage.processes.size(); ++p) {
    const std::vector<ThreadRecord>& threads = triage.processes[p].threads;
    for (size_t t = 0; t < threads.size() && !edges[p]; ++t) {
      std::optional<int> waker = waker_of(threads[t], by_pid);
      if (waker && *waker != static_cast<int>(p)) edges[p] = ProcessWait{static_cast<int>(p), t, *waker};
    }
  }
  return edges;
}

// How much a thread of the process where a chain ends says of why it is stuck, lower first: a
// wait on something of the program (a lock, an event, a join), then running code, then a wait
// for time or input (a sleep, a select, a read), then waiting for work.
int end_rank(const ThreadRecord& thread) {
  if (thread.idle || !thread.blocked_kind) return 3;
  const std::string& kind = *thread.blocked_kind;
  if (kind == "running") return 1;
  if (kind == "sleep" || kind == "select" || kind == "syscall" || kind == "socket" || kind == "read") return 2;
  return 0;
}

// What the process where a chain ends does, by its thread that says most (end_rank).
std::string describe_end(const Triage& triage, int process) {
  const std::vector<ThreadRecord>& threads = triage.processes[process].threads;
  const ThreadRecord* chosen = nullptr;
  for (const ThreadRecord& thread : threads) {
    if (thread.asyncio_task || thread.python_frames.empty()) continue;
    if (!chosen || end_rank(thread) < end_rank(*chosen)) chosen = &thread;
  }
  std::string text = process_name(triage, process);
  if (!chosen) return text;
  if (!chosen->main_thread && chosen->name) text += fmt::format("'s thread \"{}\"", printable(*chosen->name, 64));
  text += in_its_place(*chosen);
  if (chosen->blocked_kind == "running") return text + ", running";
  if (chosen->blocked_description) text += ", waiting for " + *chosen->blocked_description;
  return text;
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

std::vector<ProcessChain> find_process_chains(const Triage& triage) {
  const std::vector<std::optional<ProcessWait>> edges = process_edges(triage);
  std::vector<ProcessChain> chains;
  // Started only where no process waits for this one: a chain is told once, from its start.
  std::vector<bool> waited_for(edges.size(), false);
  for (const auto& edge : edges)
    if (edge) waited_for[static_cast<size_t>(edge->waits_for)] = true;
  for (size_t start = 0; start < edges.size(); ++start) {
    if (!edges[start] || waited_for[start]) continue;
    ProcessChain chain;
    std::vector<bool> seen(edges.size(), false);
    int at = static_cast<int>(start);
    while (edges[at] && !seen[at]) {
      seen[at] = true;
      chain.waits.push_back(*edges[at]);
      at = edges[at]->waits_for;
    }
    if (edges[at]) continue;  // it runs into a cycle, which is told as one
    chain.end = at;
    chains.push_back(std::move(chain));
  }
  return chains;
}

std::string describe_process_chain(const Triage& triage, const ProcessChain& chain) {
  std::vector<std::string> waits;
  for (const ProcessWait& wait : chain.waits) waits.push_back(describe_wait(triage, wait));
  return fmt::format("wait chain: {}; where it ends: {}", fmt::join(waits, ", and "), describe_end(triage, chain.end));
}

std::string describe_process_cycle(const Triage& triage, const ProcessCycle& cycle) {
  std::vector<std::string> waits;
  for (const ProcessWait& wait : cycle.waits) waits.push_back(describe_wait(triage, wait));
  const std::string opening = cycle.waits.size() == 2 ? std::string("each waits for the other")
                                                      : fmt::format("{} processes wait in a circle", cycle.waits.size());
  return fmt::format("{}: {}", opening, fmt::join(waits, "; "));
}

}  // namespace hangpy::triage
