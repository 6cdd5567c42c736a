#include "report/process_labels.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/printable.h"
#include "report/process_role.h"

namespace hangpy::report {
namespace {

std::optional<int64_t> decimal(const cpython::Environment& variables, std::string_view name) {
  auto found = variables.find(std::string(name));
  if (found == variables.end()) return std::nullopt;
  const std::string& text = found->second;
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The first of `names` that holds a decimal number.
std::optional<int64_t> first_decimal(const cpython::Environment& variables,
                                     std::initializer_list<std::string_view> names) {
  for (std::string_view name : names)
    if (auto value = decimal(variables, name)) return value;
  return std::nullopt;
}

ProcessRole role_of(const cpython::ProcessInfo& process, const cpython::ProcessEnvironment& environment,
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

std::optional<std::string> host_of(const cpython::ProcessEnvironment& environment) {
  const cpython::Environment& variables = environment.variables;
  if (auto node = variables.find("SLURMD_NODENAME"); node != variables.end() && !node->second.empty())
    return node->second;
  // The system's own record beats HOSTNAME, which a shell sets and a child may inherit from
  // another machine (ssh, a container's image).
  if (environment.system_host && !environment.system_host->empty()) return environment.system_host;
  if (auto host = variables.find("HOSTNAME"); host != variables.end() && !host->second.empty())
    return host->second;
  return std::nullopt;
}

std::vector<std::pair<std::string, std::optional<int64_t>>> numeric_labels(const cpython::Environment& variables) {
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
                                  const cpython::ProcessEnvironment& environment,
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
                        const cpython::ProcessEnvironment& environment, const cpython::ProcessStacks* stacks) {
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
    if (cpython::is_label_variable(name)) variables[name] = value;
  process_json["environment"] = std::move(variables);
  process_json["environment_source"] =
      environment.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(environment.source);
}

}  // namespace hangpy::report
