// Who a process is in its job: its host, rank labels and role, read from a few whitelisted
// environment variables (never the whole environment: it holds tokens and passwords) and the
// process facts. For the text header and --json's "process" object (docs/json-schema.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpython/runtime_labels.h"
#include "cpython/stacks.h"
#include "cpython/target.h"

namespace hangpy::report {

// Only these names are ever kept, parsed or printed (see kLabelVariables in the .cpp for why each).
bool is_label_variable(std::string_view name);

// NAME=value entries, kept where is_label_variable(NAME); a later entry of a name wins, as in
// getenv. Entries without '=' are skipped.
using Environment = std::map<std::string, std::string>;
void keep_label_variables(std::string_view entry, Environment& into);
// A saved environment text: /proc/PID/environ (NUL-separated), ABRT's `environ` (one per line),
// apport's ProcEnviron (one per line). Only the label variables are kept.
Environment label_variables_of_text(std::string_view text);

// The process's environment as far as labels go, and where it came from.
struct ProcessEnvironment {
  Environment variables;  // label variables only
  // "initial stack" (a core), "libc environ" (a core whose initial stack was overwritten),
  // "/proc/PID/environ", "ABRT environ", "apport ProcEnviron"; empty when none was found.
  std::string source;
  // The machine's name as the system recorded it (gethostname for a live process, ABRT's
  // `hostname`); absent for a plain core, which does not hold it.
  std::optional<std::string> system_host;
  // What the program knows of itself (cpython/runtime_labels.h): the index
  // torch.multiprocessing.spawn passed it (its rank where RANK is not set), a DataLoader worker's
  // id. os.environ's values are merged into `variables` (the program's, set at run time, win).
  std::optional<int64_t> spawn_index;
  std::optional<int64_t> dataloader_worker_id;
  // How many ranks the job should have where WORLD_SIZE does not say: the world_size passed to
  // init_process_group (a rank's "world_size" label then), the nprocs spawn started (a parent's).
  std::optional<int64_t> group_world_size;
  std::optional<int64_t> spawn_nprocs;
};

// Merges what the program knows now into `environment`: os.environ's label variables override
// those of exec (the source then says so), and the indexes read from its frames are kept.
void add_runtime_labels(ProcessEnvironment& environment, const std::map<std::string, std::string>& now,
                        const cpython::JobIndexes& indexes);

// SLURMD_NODENAME (slurmd's name for the node, what `squeue` shows), else the system's name,
// else the inherited HOSTNAME; nullopt when none is known.
std::optional<std::string> host_of(const ProcessEnvironment& environment);

// The numeric labels, each nullopt when absent or not a decimal integer: "rank", "local_rank",
// "world_size", "local_world_size", "group_rank", "slurm_procid", "slurm_localid",
// "slurm_nodeid", "slurm_job_id". rank, local_rank and world_size fall back to MPI's names.
std::vector<std::pair<std::string, std::optional<int64_t>>> numeric_labels(const Environment& variables);

// "docker container 3f2a9c81d0e4 "web-1" (its own PID namespace, where it is PID 1)": a
// container in a report's words.
std::string describe_container(const cpython::ContainerInfo& container,
                               std::optional<int64_t> namespace_pid = std::nullopt);
// The process's PID in its own PID namespace, where a target knows it (ProcessInfo::namespace_pids).
std::optional<int64_t> namespace_pid_of(const cpython::ProcessInfo& process);

// "Role: training rank (rank 3 of 8, local rank 1, SLURM_PROCID 3), host node7\n".
std::string format_process_labels(const cpython::ProcessInfo& process,
                                  const ProcessEnvironment& environment,
                                  const cpython::ProcessStacks* stacks);

// Adds "ppid", "host", "role", "labels", "environment" and "environment_source" to the
// document's "process" object.
void add_process_labels(nlohmann::json& process_json, const cpython::ProcessInfo& process,
                        const ProcessEnvironment& environment, const cpython::ProcessStacks* stacks);

}  // namespace hangpy::report
