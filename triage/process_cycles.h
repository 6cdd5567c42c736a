// Processes that wait for each other: a wait-for graph over the processes triaged, with an edge
// p -> q where a thread of p, not waiting for work, waits for child q to exit or waits at a pipe
// whose other end q alone holds. Its cycles are deadlocks no single process shows: a parent in
// Popen.wait() whose child writes to a full pipe that only the parent could read.
#pragma once

#include <string>
#include <vector>

#include "triage/merge.h"

namespace hangpy::triage {

struct ProcessWait {
  int process = 0;    // who waits
  size_t thread = 0;  // its thread that waits
  int waits_for = 0;  // the process that alone can end the wait
};

struct ProcessCycle {
  std::vector<ProcessWait> waits;  // each waits for the next, the last for the first
};

std::vector<ProcessCycle> find_process_cycles(const Triage& triage);

// A chain of such waits that ends at a process waiting for no other here: a client that waits on
// a connection only a server holds, the server stuck on a lock of its own. The end is where the
// job's waits lead: the culprit, whatever the size of its group.
struct ProcessChain {
  std::vector<ProcessWait> waits;  // from the start, each waiting for the next
  int end = 0;
};

// The chains from every process no other waits for; those that run into a cycle are left to it.
std::vector<ProcessChain> find_process_chains(const Triage& triage);

// "wait chain: process 1 (PID 42) waits in `fetch` at client.py:12 on a connection whose other
// end only process 0 holds; where it ends: process 0 (PID 41) in `handle` at server.py:30,
// waiting for Lock 0x7f... (owner unknown)"
std::string describe_process_chain(const Triage& triage, const ProcessChain& chain);

// "each waits for the other: process 0 (PID 41) waits in `Popen.wait` at run.py:12 for process
// 1 to exit; process 1 (PID 42) writes in `main` at child.py:3 to a pipe only process 0 reads"
std::string describe_process_cycle(const Triage& triage, const ProcessCycle& cycle);

}  // namespace hangpy::triage
