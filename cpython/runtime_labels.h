// Who a process is in its job as the program knows it now, read from its memory: os.environ's
// values of the label variables (a script may set RANK at run time; the initial stack and
// /proc/PID/environ keep the values of exec), the index torch.multiprocessing.spawn passed to
// the process (its `_wrap` frame's `i`: what such programs use as their rank), and a DataLoader
// worker's id (its `_worker_loop` frame's `worker_id`), and how many ranks the job should have
// where the environment does not say (WORLD_SIZE): the `world_size` a rank passed to
// `init_process_group`, the `nprocs` torch.multiprocessing.spawn's parent started.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "cpython/address_space.h"
#include "cpython/stacks.h"

namespace hangpy::cpython {

// os.environ's entries now, of the names `wanted` accepts (no other entry's value is read; the
// names of other lengths are not read either).
std::map<std::string, std::string> read_environment_now(const AddressSpace& memory, const ProcessStacks& stacks,
                                                        const std::function<bool(std::string_view)>& wanted);

struct JobIndexes {
  std::optional<int64_t> spawn_index;
  std::optional<int64_t> dataloader_worker_id;
  std::optional<int64_t> group_world_size;  // init_process_group's world_size argument, if > 0
  std::optional<int64_t> spawn_nprocs;      // start_processes' nprocs (the spawning parent)
};
JobIndexes read_job_indexes(const AddressSpace& memory, const ProcessStacks& stacks);

}  // namespace hangpy::cpython
