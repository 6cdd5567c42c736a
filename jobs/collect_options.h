// `coreanalyze collect`'s command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace hangpy::jobs {

enum class CoreKind { kNone, kSnapshot, kFull };

struct CollectOptions {
  // Which processes (one kind; with none, the SLURM job of $SLURM_JOB_ID).
  std::vector<int> root_pids;                // --pid: these and their descendants
  std::optional<std::string> name_pattern;   // --name
  std::optional<std::string> slurm_job;      // --slurm-job
  std::optional<std::string> container;      // --container: a container's id (a prefix of it)
  // What is taken of each.
  CoreKind cores = CoreKind::kNone;
  bool native = false;
  bool locals = true;  // unless --no-locals: the analyses read each frame's locals
  bool nonblocking = false;
  std::optional<std::string> max_stop_ms;
  int timeout_seconds = 60;  // per process analysis, per core
  int jobs = 2;              // analyses at once
  // Where the results go.
  std::string output_dir;   // DIR; this node's results in DIR/NODE
  std::string node_name;    // NODE
  bool triage = true;
  // Many nodes.
  std::optional<std::string> srun_job;   // --srun JOBID
  std::optional<std::string> pdsh_hosts; // --pdsh HOSTS
  std::optional<std::string> pdsh_rcmd;  // --pdsh-rcmd TYPE
  std::optional<std::string> remote_binary;
  std::optional<std::string> local_dir;  // --local-dir: --srun nodes write here, then copied to DIR
  std::optional<std::string> via;        // --via: collect inside a container through this command
  bool node_only = false;  // (internal) run by --srun/--pdsh on a node: no summary, no triage
};

// Parses `coreanalyze collect ARGS` (argv[0] is "collect"). Returns the exit code when the program
// should stop (help, or a usage error already reported in one line).
std::optional<int> parse_collect_options(int argc, char** argv, CollectOptions& options);

// The same options for a command that takes them all (coreanalyze watch): their descriptions, and
// reading them from a parsed command line; messages start with `program`.
boost::program_options::options_description collect_visible_options();
std::optional<int> read_collect_options(const boost::program_options::variables_map& vm,
                                        CollectOptions& options, const std::string& program);

// "PREFIX-20261126-123501": a directory named for now, in the local time.
std::string dated_output_dir(const std::string& prefix);

// The command line (from "collect" on) that collects with these options.
std::vector<std::string> collect_arguments(const CollectOptions& options);

}  // namespace hangpy::jobs
