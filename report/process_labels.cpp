#include "report/process_labels.h"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/printable.h"
#include "report/process_role.h"

namespace hangpy::report {
namespace {

// The variables that say where a process sits in a job, and nothing else: a training job's
// environment holds API tokens, cloud keys and passwords, so no other name is ever read into the
// report. Each is set by a launcher, not by the user, and is no secret:
constexpr std::array<std::string_view, 29> kLabelVariables = {
    // torchrun / torch.distributed.run (torch/distributed/elastic/agent/server/api.py)
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
    "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME", "TORCHELASTIC_RUN_ID",
    "TORCHELASTIC_RESTART_COUNT", "MASTER_ADDR", "MASTER_PORT",
    // Slurm's srun (the job, the task's place in it, the node)
    "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_JOB_ID", "SLURM_STEP_ID",
    "SLURM_NTASKS", "SLURMD_NODENAME",
    // MPI launchers (Open MPI, MPICH/Hydra), whose ranks DDP and Horovod use
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK",
    "PMI_SIZE",
    // the machine and the devices the process was given
    "HOSTNAME", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
};

std::optional<int64_t> decimal(const Environment& variables, std::string_view name) {
  auto found = variables.find(std::string(name));
  if (found == variables.end()) return std::nullopt;
  const std::string& text = found->second;
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The first of `names` that holds a decimal number.
std::optional<int64_t> first_decimal(const Environment& variables,
                                     std::initializer_list<std::string_view> names) {
  for (std::string_view name : names)
    if (auto value = decimal(variables, name)) return value;
  return std::nullopt;
}

ProcessRole role_of(const cpython::ProcessInfo& process, const ProcessEnvironment& environment,
                    const cpython::ProcessStacks* stacks) {
  RoleEvidence evidence;
  evidence.command = process.command;
  evidence.arguments = process.arguments;
  evidence.executable = process.executable;
  evidence.environment = &environment.variables;
  evidence.stacks = stacks;
  return classify_process(evidence);
}

}  // namespace

bool is_label_variable(std::string_view name) {
  return std::find(kLabelVariables.begin(), kLabelVariables.end(), name) != kLabelVariables.end();
}

void keep_label_variables(std::string_view entry, Environment& into) {
  const size_t equals = entry.find('=');
  if (equals == std::string_view::npos || equals == 0) return;
  const std::string_view name = entry.substr(0, equals);
  if (!is_label_variable(name)) return;
  into[std::string(name)] = std::string(entry.substr(equals + 1));
}

Environment label_variables_of_text(std::string_view text) {
  Environment variables;
  while (!text.empty()) {
    const size_t end = std::min(text.find_first_of(std::string_view("\0\n", 2)), text.size());
    keep_label_variables(text.substr(0, end), variables);
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return variables;
}

std::optional<std::string> host_of(const ProcessEnvironment& environment) {
  const Environment& variables = environment.variables;
  if (auto node = variables.find("SLURMD_NODENAME"); node != variables.end() && !node->second.empty())
    return node->second;
  // The system's own record beats HOSTNAME, which a shell sets and a child may inherit from
  // another machine (ssh, a container's image).
  if (environment.system_host && !environment.system_host->empty()) return environment.system_host;
  if (auto host = variables.find("HOSTNAME"); host != variables.end() && !host->second.empty())
    return host->second;
  return std::nullopt;
}

std::vector<std::pair<std::string, std::optional<int64_t>>> numeric_labels(const Environment& variables) {
  return {
      {"rank", first_decimal(variables, {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})},
      {"local_rank", first_decimal(variables, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"})},
      {"world_size", first_decimal(variables, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})},
      {"local_world_size", decimal(variables, "LOCAL_WORLD_SIZE")},
      {"group_rank", decimal(variables, "GROUP_RANK")},
      {"slurm_procid", decimal(variables, "SLURM_PROCID")},
      {"slurm_localid", decimal(variables, "SLURM_LOCALID")},
      {"slurm_nodeid", decimal(variables, "SLURM_NODEID")},
      {"slurm_job_id", decimal(variables, "SLURM_JOB_ID")},
  };
}

void add_runtime_labels(ProcessEnvironment& environment, const std::map<std::string, std::string>& now,
                        const cpython::JobIndexes& indexes) {
  bool changed = false;
  for (const auto& [name, value] : now) {
    if (!is_label_variable(name)) continue;
    auto [it, inserted] = environment.variables.try_emplace(name, value);
    if (!inserted && it->second != value) it->second = value;
    else if (!inserted) continue;
    changed = true;
  }
  if (changed) environment.source = environment.source.empty() ? "os.environ" : environment.source + ", os.environ";
  environment.spawn_index = indexes.spawn_index;
  environment.dataloader_worker_id = indexes.dataloader_worker_id;
  environment.group_world_size = indexes.group_world_size;
  environment.spawn_nprocs = indexes.spawn_nprocs;
}

// "docker container 3f2a9c81d0e4 (its own PID namespace)", "Kubernetes pod 0b6e..., containerd
// container 77aa...": the container's words in a report.
std::optional<int64_t> namespace_pid_of(const cpython::ProcessInfo& process) {
  if (process.namespace_pids.empty() || process.namespace_pids.front().pid != process.pid) return std::nullopt;
  return process.namespace_pids.front().namespace_pid;
}

std::string describe_container(const cpython::ContainerInfo& container, std::optional<int64_t> namespace_pid) {
  std::vector<std::string> parts;
  if (!container.pod_uid.empty()) parts.push_back(fmt::format("Kubernetes pod {}", container.pod_uid));
  if (!container.runtime.empty())
    parts.push_back(container.id.empty() ? fmt::format("{} container", container.runtime)
                                         : fmt::format("{} container {}", container.runtime, container.id.substr(0, 12)));
  if (!container.name.empty()) parts.back() += fmt::format(" \"{}\"", printable(container.name, 128));
  if (parts.empty()) parts.push_back("a container of unknown kind");
  std::string text = fmt::format("{}", fmt::join(parts, ", "));
  if (container.own_pid_namespace)
    text += namespace_pid ? fmt::format(" (its own PID namespace, where it is PID {})", *namespace_pid)
                          : std::string(" (its own PID namespace)");
  return text;
}


std::string format_process_labels(const cpython::ProcessInfo& process,
                                  const ProcessEnvironment& environment,
                                  const cpython::ProcessStacks* stacks) {
  std::map<std::string, std::optional<int64_t>> labels;
  for (auto& [name, value] : numeric_labels(environment.variables)) labels[name] = value;
  if (!labels["rank"]) labels["rank"] = environment.spawn_index;
  if (!labels["world_size"]) labels["world_size"] = environment.group_world_size;
  std::vector<std::string> parts;
  if (auto rank = labels["rank"]) {
    parts.push_back(labels["world_size"] ? fmt::format("rank {} of {}", *rank, *labels["world_size"])
                                         : fmt::format("rank {}", *rank));
  }
  if (auto local = labels["local_rank"]) parts.push_back(fmt::format("local rank {}", *local));
  if (auto procid = labels["slurm_procid"]) parts.push_back(fmt::format("SLURM_PROCID {}", *procid));
  if (auto worker = environment.dataloader_worker_id) parts.push_back(fmt::format("DataLoader worker {}", *worker));
  std::string text = fmt::format("Role: {}", role_name(role_of(process, environment, stacks)));
  if (!parts.empty()) text += fmt::format(" ({})", fmt::join(parts, ", "));
  const std::optional<std::string> host = host_of(environment);
  text += fmt::format(", host {}", host ? *host : "unknown");
  if (process.container) text += ", in " + describe_container(*process.container, namespace_pid_of(process));
  return text + "\n";
}

void add_process_labels(nlohmann::json& process_json, const cpython::ProcessInfo& process,
                        const ProcessEnvironment& environment, const cpython::ProcessStacks* stacks) {
  process_json["ppid"] = process.parent_pid ? nlohmann::json(*process.parent_pid) : nullptr;
  const std::optional<std::string> host = host_of(environment);
  process_json["host"] = host ? nlohmann::json(*host) : nullptr;
  if (const auto& container = process.container) {
    process_json["container"] = {{"runtime", container->runtime.empty() ? nlohmann::json(nullptr) : nlohmann::json(container->runtime)},
                                 {"id", container->id.empty() ? nlohmann::json(nullptr) : nlohmann::json(container->id)},
                                 {"name", container->name.empty() ? nlohmann::json(nullptr) : nlohmann::json(container->name)},
                                 {"pod_uid", container->pod_uid.empty() ? nlohmann::json(nullptr) : nlohmann::json(container->pod_uid)},
                                 {"own_pid_namespace", container->own_pid_namespace},
                                 {"description", describe_container(*container, namespace_pid_of(process))}};
  }
  process_json["role"] = std::string(role_name(role_of(process, environment, stacks)));
  nlohmann::json labels = nlohmann::json::object();
  for (auto& [name, value] : numeric_labels(environment.variables))
    labels[name] = value ? nlohmann::json(*value) : nullptr;
  // torch.multiprocessing.spawn's ranks have no RANK: the index spawn passed is what they use.
  if (labels["rank"].is_null() && environment.spawn_index) labels["rank"] = *environment.spawn_index;
  labels["spawn_index"] = environment.spawn_index ? nlohmann::json(*environment.spawn_index) : nullptr;
  // A rank started without WORLD_SIZE: the size it gave init_process_group.
  if (labels["world_size"].is_null() && environment.group_world_size)
    labels["world_size"] = *environment.group_world_size;
  labels["spawn_nprocs"] = environment.spawn_nprocs ? nlohmann::json(*environment.spawn_nprocs) : nullptr;
  labels["dataloader_worker_id"] =
      environment.dataloader_worker_id ? nlohmann::json(*environment.dataloader_worker_id) : nullptr;
  process_json["labels"] = std::move(labels);
  nlohmann::json variables = nlohmann::json::object();
  for (const auto& [name, value] : environment.variables)
    if (is_label_variable(name)) variables[name] = value;
  process_json["environment"] = std::move(variables);
  process_json["environment_source"] =
      environment.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(environment.source);
}

}  // namespace hangpy::report
