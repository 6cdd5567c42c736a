// What part a process plays in a job (a torchrun agent, a training rank, a DataLoader worker...),
// told from what any shell knows of it: its command line, environment and Python stacks. Pure:
// no I/O, so a multi-process triage can classify JSON gathered on other nodes the same way.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "cpython/stacks.h"

namespace hangpy::report {

enum class ProcessRole {
  kElasticAgent,      // torchrun / torch.distributed.run's agent, which starts the ranks
  kTrainingRank,      // a process with a rank (RANK, SLURM_PROCID, MPI) or started by mp.spawn
  kDataLoaderWorker,  // torch.utils.data's worker process
  kTorchShmManager,   // PyTorch's native shared-memory manager (file_system sharing)
  kResourceTracker,   // multiprocessing's resource_tracker (semaphore_tracker before 3.8)
  kGunicornArbiter,
  kGunicornWorker,
  kChild,             // another multiprocessing / concurrent.futures child
  kProcess,           // nothing more specific is known
};

// "elastic agent", "training rank", "DataLoader worker", "torch_shm_manager", "resource_tracker",
// "gunicorn arbiter", "gunicorn worker", "child", "process": the JSON "role" values.
std::string_view role_name(ProcessRole role);

struct RoleEvidence {
  std::string_view command;     // the kernel's command name (comm, at most 15 bytes)
  std::string_view arguments;   // the command line, arguments separated by spaces
  std::string_view executable;  // the main program's path
  const std::map<std::string, std::string>* environment = nullptr;  // the kept variables
  const cpython::ProcessStacks* stacks = nullptr;  // absent where no Python could be read
};

// The most specific role the evidence shows. Roles a process inherits from its parent's
// environment (a DataLoader worker or resource_tracker forked by a rank keeps RANK) are told
// first, by command line and stacks; a rank is told by its environment last.
ProcessRole classify_process(const RoleEvidence& evidence);

}  // namespace hangpy::report
