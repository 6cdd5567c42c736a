#include "cpython/process_environment.h"

#include <algorithm>
#include <array>

namespace hangpy::cpython {
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

}  // namespace hangpy::cpython
