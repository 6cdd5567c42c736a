// `coreanalyze collect` on one node: finds the job's processes, takes each Python process's
// stacks (this program run with --pid PID --json) and, when asked, a core with gcore; writes
// DIR/NODE/PID.json, the cores and DIR/NODE/manifest.json.
#pragma once

#include <nlohmann/json.hpp>

#include "jobs/collect_options.h"

namespace hangpy::jobs {

struct NodeCollection {
  int exit_code = 0;          // as `coreanalyze collect --help` lists them
  nlohmann::json manifest;    // what DIR/NODE/manifest.json holds
};

// `self` is this program's path, run once per process.
NodeCollection collect_on_this_node(const CollectOptions& options, const std::string& self);

}  // namespace hangpy::jobs
