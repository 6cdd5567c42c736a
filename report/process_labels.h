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

#include "cpython/process_environment.h"
#include "cpython/runtime_labels.h"
#include "cpython/stacks.h"
#include "cpython/target.h"

namespace hangpy::report {

// SLURMD_NODENAME (slurmd's name for the node, what `squeue` shows), else the system's name,
// else the inherited HOSTNAME; nullopt when none is known.
std::optional<std::string> host_of(const cpython::ProcessEnvironment& environment);

// The numeric labels, each nullopt when absent or not a decimal integer: "rank", "local_rank",
// "world_size", "local_world_size", "group_rank", "slurm_procid", "slurm_localid",
// "slurm_nodeid", "slurm_job_id". rank, local_rank and world_size fall back to MPI's names.
std::vector<std::pair<std::string, std::optional<int64_t>>> numeric_labels(const cpython::Environment& variables);

// "docker container 3f2a9c81d0e4 "web-1" (its own PID namespace, where it is PID 1)": a
// container in a report's words.
std::string describe_container(const cpython::ContainerInfo& container,
                               std::optional<int64_t> namespace_pid = std::nullopt);
// The process's PID in its own PID namespace, where a target knows it (ProcessInfo::namespace_pids).
std::optional<int64_t> namespace_pid_of(const cpython::ProcessInfo& process);

// "Role: training rank (rank 3 of 8, local rank 1, SLURM_PROCID 3), host node7\n".
std::string format_process_labels(const cpython::ProcessInfo& process,
                                  const cpython::ProcessEnvironment& environment,
                                  const cpython::ProcessStacks* stacks);

// Adds "ppid", "host", "role", "labels", "environment" and "environment_source" to the
// document's "process" object.
void add_process_labels(nlohmann::json& process_json, const cpython::ProcessInfo& process,
                        const cpython::ProcessEnvironment& environment, const cpython::ProcessStacks* stacks);

}  // namespace hangpy::report
