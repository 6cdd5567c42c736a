// The processes of this machine as /proc shows them, and the ways `coreanalyze collect` picks a
// job's processes among them: the tree under a PID, a command-line pattern, a SLURM job id.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "targets/container_names.h"

namespace hangpy::jobs {

struct ProcessEntry {
  int pid = 0;
  int ppid = 0;
  char state = '?';              // /proc/PID/stat's state letter; 'Z' is a zombie
  std::string comm;              // /proc/PID/comm
  std::string exe;               // /proc/PID/exe's target; empty when it cannot be read
  std::vector<std::string> argv; // /proc/PID/cmdline
  bool runs_python = false;      // a python executable or a libpython in its maps
  bool maps_readable = true;     // false: another user's process (or gone)
  std::map<std::string, std::string> labels;  // RANK, LOCAL_RANK, ... from its environment
  std::optional<std::string> slurm_job_id;    // from its environment or its cgroup
  std::optional<std::string> container_id;    // the container its cgroup names (targets/containers.h)
  std::optional<std::string> pod_uid;         // the Kubernetes pod its cgroup names

  bool zombie() const { return state == 'Z'; }
  std::string command_line() const;  // argv joined by spaces (comm in brackets when empty)
};

// Every process /proc lists now, by pid (a process that exits while it is read is left out).
std::map<int, ProcessEntry> read_process_table();

// One process, or nullopt when it does not exist.
std::optional<ProcessEntry> read_process(int pid);

// The environment variables kept as labels (a job's rank and the like).
const std::vector<std::string>& label_variables();

// `root` and its descendants, parents before children.
std::vector<int> process_tree(const std::map<int, ProcessEntry>& table, int root);

// Processes whose command line, comm or executable contain `pattern`, with their descendants.
std::vector<int> processes_named(const std::map<int, ProcessEntry>& table, const std::string& pattern);

// Processes of SLURM job `job_id` (its SLURM_JOB_ID in their environment, or its cgroup).
std::vector<int> processes_of_slurm_job(const std::map<int, ProcessEntry>& table,
                                        const std::string& job_id);

// Processes in the container `which` names, as their cgroups name it: the start of its id (4 hex
// digits or more), its name in its runtime's records (`names`: targets/container_names.h), or the
// start of its Kubernetes pod's UID.
std::vector<int> processes_of_container(const std::map<int, ProcessEntry>& table, const std::string& which,
                                        const std::vector<targets::NamedContainer>& names);

// `pid`'s ancestors (not `pid`), nearest first.
std::vector<int> ancestors(const std::map<int, ProcessEntry>& table, int pid);

}  // namespace hangpy::jobs
