// Where a process sits in its job, as its environment says: a few whitelisted variables (never
// the whole environment: it holds tokens and passwords), where they came from, and what the
// program knows of itself (runtime_labels.h). Each target finds them its own way
// (analysis::ProcessTarget::environment()); report/process_labels.h prints them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "cpython/runtime_labels.h"

namespace hangpy::cpython {

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
                        const JobIndexes& indexes);

}  // namespace hangpy::cpython
