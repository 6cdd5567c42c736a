#include "triage/labels.h"

#include "base/printable.h"

#include <fmt/format.h>

namespace hangpy::triage {
namespace {

// The field names of coreanalyze --json (docs/json-schema.md, "process"): the rank labels live in
// process.labels, host, role and ppid on process itself. Both places are searched for each, so a
// field that moves between them keeps working.
constexpr const char* kRank = "rank";
constexpr const char* kLocalRank = "local_rank";
constexpr const char* kWorldSize = "world_size";
constexpr const char* kSlurmProcid = "slurm_procid";
constexpr const char* kHost = "host";
constexpr const char* kRole = "role";
constexpr const char* kPid = "pid";
// "ppid" from the labels helper; "parent_pid" is what the core's NT_PRPSINFO gives.
constexpr const char* kPpidNames[] = {"ppid", "parent_pid"};

const nlohmann::json* field(const nlohmann::json& process, const char* name) {
  if (!process.is_object()) return nullptr;
  auto labels = process.find("labels");
  if (labels != process.end() && labels->is_object()) {
    auto found = labels->find(name);
    if (found != labels->end() && !found->is_null()) return &*found;
  }
  auto found = process.find(name);
  if (found != process.end() && !found->is_null()) return &*found;
  return nullptr;
}

std::optional<int64_t> integer_field(const nlohmann::json& process, const char* name) {
  const nlohmann::json* value = field(process, name);
  if (value == nullptr) return std::nullopt;
  if (value->is_number_integer()) return value->get<int64_t>();
  // Environment variables are text: a label copied as a string still counts when it is a number.
  if (value->is_string()) {
    const std::string& text = value->get_ref<const std::string&>();
    if (text.empty() || text.size() > 18) return std::nullopt;
    int64_t number = 0;
    for (char c : text) {
      if (c < '0' || c > '9') return std::nullopt;
      number = number * 10 + (c - '0');
    }
    return number;
  }
  return std::nullopt;
}

std::optional<std::string> string_field(const nlohmann::json& process, const char* name) {
  const nlohmann::json* value = field(process, name);
  if (value == nullptr || !value->is_string() || value->get_ref<const std::string&>().empty())
    return std::nullopt;
  return value->get<std::string>();
}

}  // namespace

ProcessLabels labels_from_json(const nlohmann::json& process) {
  ProcessLabels labels;
  labels.pid = integer_field(process, kPid);
  for (const char* name : kPpidNames) {
    if (!labels.ppid) labels.ppid = integer_field(process, name);
  }
  labels.host = string_field(process, kHost);
  if (auto container = process.find("container"); container != process.end() && container->is_object()) {
    auto text = [&](const char* name) {
      auto found = container->find(name);
      return found != container->end() && found->is_string() ? found->get<std::string>() : std::string();
    };
    const std::string runtime = text("runtime"), id = text("id"), name = text("name");
    // Its name where the runtime's records gave one: what the user started it as.
    const std::string which = name.empty() ? id.substr(0, 12) : printable(name, 64);
    labels.container = runtime.empty() ? std::string("a container")
                                       : which.empty() ? runtime : fmt::format("{} {}", runtime, which);
  }
  labels.rank = integer_field(process, kRank);
  labels.local_rank = integer_field(process, kLocalRank);
  labels.world_size = integer_field(process, kWorldSize);
  labels.slurm_procid = integer_field(process, kSlurmProcid);
  labels.role = string_field(process, kRole);
  labels.dataloader_worker_id = integer_field(process, "dataloader_worker_id");
  labels.spawn_nprocs = integer_field(process, "spawn_nprocs");
  return labels;
}

std::optional<int64_t> rank_of(const ProcessLabels& labels) {
  if (labels.rank) return labels.rank;
  return labels.slurm_procid;
}

bool is_plain_role(const std::optional<std::string>& role) {
  return !role || *role == "process" || *role == "training rank";
}

}  // namespace hangpy::triage
