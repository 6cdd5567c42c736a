#include "triage/labels.h"

#include "base/printable.h"
#include "triage/json_view.h"

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

JsonView field(JsonView process, const char* name) {
  if (JsonView found = process["labels"][name]; found.present()) return found;
  return process[name];
}

std::optional<int64_t> integer_field(JsonView process, const char* name) {
  JsonView value = field(process, name);
  if (auto number = value.integer()) return number;
  // Environment variables are text: a label copied as a string still counts when it is a number.
  std::string_view text = value.raw();
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t number = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    number = number * 10 + (c - '0');
  }
  return number;
}

std::optional<std::string> string_field(JsonView process, const char* name) {
  auto text = field(process, name).string();
  if (!text || text->empty()) return std::nullopt;
  return text;
}

}  // namespace

ProcessLabels labels_from_view(JsonView process) {
  ProcessLabels labels;
  labels.pid = integer_field(process, kPid);
  for (const char* name : kPpidNames) {
    if (!labels.ppid) labels.ppid = integer_field(process, name);
  }
  labels.host = string_field(process, kHost);
  if (JsonView container = process["container"]; container.is_object()) {
    const std::string runtime = container.text("runtime"), id = container.text("id"), name = container.text("name");
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

ProcessLabels labels_from_json(const nlohmann::json& process) {
  std::string text = process.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  rapidjson::Document document;
  if (!parse_in_place(text, document)) return {};
  return labels_from_view(JsonView(&document, nullptr));
}

std::optional<int64_t> rank_of(const ProcessLabels& labels) {
  if (labels.rank) return labels.rank;
  return labels.slurm_procid;
}

bool is_plain_role(const std::optional<std::string>& role) {
  return !role || *role == "process" || *role == "training rank";
}

}  // namespace hangpy::triage
