// Who each process is in its job: host, PID, rank labels and role, as the "process" object of a
// coreanalyze --json document states them. The one place that knows those field names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace hangpy::triage {

struct ProcessLabels {
  std::optional<int64_t> pid;
  std::optional<int64_t> ppid;
  std::optional<std::string> host;
  // The container it runs in, short: "docker 3f2a9c81d0e4", "podman", "a container" (process.container).
  std::optional<std::string> container;
  std::optional<int64_t> rank;          // RANK (torchrun), MPI's rank where that is all there is
  std::optional<int64_t> local_rank;    // LOCAL_RANK
  std::optional<int64_t> world_size;    // WORLD_SIZE
  std::optional<int64_t> slurm_procid;  // SLURM_PROCID
  std::optional<std::string> role;      // "training rank", "DataLoader worker", ...; absent unknown
  std::optional<int64_t> dataloader_worker_id;  // a DataLoader worker's id (its worker_id)
  std::optional<int64_t> spawn_nprocs;  // torch.multiprocessing.spawn's parent: processes started
};

// Reads the labels of a document's "process" object. Each field is looked up under
// process.labels first and then on process itself; a missing, null or mistyped field is absent.
ProcessLabels labels_from_json(const nlohmann::json& process);
class JsonView;
ProcessLabels labels_from_view(JsonView process);  // the same, over a triage/json_view.h view

// The rank a process is named by in rank sets: RANK, else SLURM_PROCID (srun starts one task per
// rank); absent when neither is known, and the process goes by its input position.
std::optional<int64_t> rank_of(const ProcessLabels& labels);

// Roles that say nothing more than "a process of the job": the verdict leaves them unnamed.
bool is_plain_role(const std::optional<std::string>& role);

}  // namespace hangpy::triage
