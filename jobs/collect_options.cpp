#include "jobs/collect_options.h"
#include "jobs/collect_via.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "base/parse_number.h"
#include "base/exit_codes.h"

namespace po = boost::program_options;

namespace hangpy::jobs {
namespace {

// Whose options these are, in messages: collect's own, or watch's (which takes them all).
std::string program_name = "coreanalyze collect";

}  // namespace

po::options_description collect_visible_options() {
  po::options_description options("Options");
  options.add_options()
      ("help,h", "print this help and exit")
      ("pid", po::value<std::vector<std::string>>()->composing()->value_name("PID"),
       "the process PID and all its descendants (repeat, or PID,PID,...)")
      ("name", po::value<std::string>()->value_name("PATTERN"),
       "the processes whose command line, name or executable contain PATTERN, and their "
       "descendants")
      ("slurm-job", po::value<std::string>()->value_name("JOBID"),
       "the processes of SLURM job JOBID on this node (its environment or its cgroup); the "
       "default inside a job ($SLURM_JOB_ID)")
      ("container", po::value<std::string>()->value_name("ID|NAME"),
       "the processes of a container, as their cgroups name it, read from this node: its id or "
       "its first 4 or more hex digits (`docker ps`, `podman ps`, `crictl ps` show it), its name "
       "(Podman's and Docker's records), or a Kubernetes pod's UID (every container of the pod)")
      ("cores", po::value<std::string>()->value_name("KIND"),
       "also keep a core of each Python process: 'snapshot' a small snapshot core of what the "
       "analysis read, written by the same run as the JSON; 'full' the whole core, with gcore "
       "(gdb), free disk space checked first (default: none, only JSON stacks)")
      ("native", "also unwind native stacks (coreanalyze --native)")
      ("no-locals", "leave out each frame's arguments and locals (by default read, bounded, so that "
                    "the triage can say which variables set the odd processes apart)")
      ("nonblocking", "read the processes without stopping them (coreanalyze --nonblocking)")
      ("max-stop", po::value<std::string>()->value_name("MS"),
       "longest a process may be held stopped (coreanalyze --max-stop)")
      ("timeout", po::value<std::string>()->value_name("SECONDS"),
       "give up on one process's analysis or core after this long (default 60)")
      ("jobs,j", po::value<std::string>()->value_name("N"), "analyses run at once (default 2)")
      ("output,o", po::value<std::string>()->value_name("DIR"),
       "write results to DIR/NODE/PID.json and DIR/NODE/manifest.json (default "
       "./hangpy-collect-DATE-TIME); with --srun or --pdsh DIR must be shared by the nodes")
      ("node-name", po::value<std::string>()->value_name("NODE"),
       "this node's directory name (default $SLURMD_NODENAME, else the host name)")
      ("no-triage", "do not run `coreanalyze triage DIR` at the end")
      ("srun", po::value<std::string>()->value_name("JOBID"),
       "collect on every node of SLURM job JOBID (srun --overlap into its allocation); selects "
       "the job's processes unless --pid or --name says otherwise")
      ("pdsh", po::value<std::string>()->value_name("HOSTS"),
       "collect on HOSTS through pdsh -w HOSTS (give --name or --slurm-job)")
      ("pdsh-rcmd", po::value<std::string>()->value_name("TYPE"),
       "pdsh's remote command module (pdsh -R TYPE; default: pdsh's, or $PDSH_RCMD_TYPE)")
      ("local-dir", po::value<std::string>()->value_name("LOCAL"),
       "with --srun: each node writes into LOCAL/NODE on its own disk (/tmp...), and then it is "
       "copied into DIR through srun and tar: for a DIR the nodes do not share")
      ("via", po::value<std::string>()->value_name("COMMAND"),
       "collect inside a container through COMMAND, which runs a program there ('podman exec "
       "CTR', 'docker exec CTR', 'kubectl exec POD -c C --'): coreanalyze is found there or "
       "copied in (--remote-binary: a static build), collects the container's processes (all "
       "of them, unless --pid or --name says), and its results are copied back into DIR/CTR")
      ("remote-binary", po::value<std::string>()->value_name("PATH"),
       "coreanalyze's path on the nodes (default: this program's path); with --via, the "
       "coreanalyze to copy into the container");
  return options;
}

namespace {

// help2man builds coreanalyze-collect.1 from this text (packaging/CMakeLists.txt): usage lines in
// GNU's "  or:" form, no option's text starting with "--".
void print_collect_usage(std::ostream& out, const po::options_description& options) {
  out << "Usage: coreanalyze collect [--pid PID | --name PATTERN | --slurm-job JOBID | --container ID] [options]\n"
         "  or:  coreanalyze collect --srun JOBID [options]\n"
         "  or:  coreanalyze collect --pdsh HOSTS --name PATTERN [options]\n"
         "  or:  coreanalyze collect --via 'podman exec CTR' [options]\n"
         "Snapshots a hung job's Python processes on this node (or on every node) before a\n"
         "watchdog kills it: each process's stacks as JSON (coreanalyze --pid --json), optionally\n"
         "a core, and a manifest of what was found and taken; then runs the triage when this\n"
         "coreanalyze has it. Processes that run no Python, and zombies, are listed and skipped.\n\n"
      << options << "\n"
      << "Exit codes: 0 every selected Python process was taken, 2 usage error, 3 no process\n"
         "selected or the output directory cannot be written, 5 some processes or nodes could\n"
         "not be taken (see the manifest), 10 none could be read: not permitted.\n";
}

std::optional<int> parse_positive(const po::variables_map& vm, const char* option, int most,
                                  int& value) {
  if (!vm.count(option)) return std::nullopt;
  auto parsed = parse_decimal<int>(vm[option].as<std::string>());
  if (!parsed || *parsed < 1 || *parsed > most) {
    fmt::print(stderr, "{}: --{} wants a number from 1 to {}, not '{}'\n", program_name, option,
               most, vm[option].as<std::string>());
    return kExitUsage;
  }
  value = *parsed;
  return std::nullopt;
}


std::string default_node_name() {
  if (const char* slurm_node = std::getenv("SLURMD_NODENAME"); slurm_node && *slurm_node)
    return slurm_node;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::optional<int> parse_selection(const po::variables_map& vm, CollectOptions& options) {
  if (vm.count("pid")) {
    if (auto bad = append_pid_lists(vm["pid"].as<std::vector<std::string>>(), options.root_pids)) {
      fmt::print(stderr, "{}: --pid wants a process id, not '{}'\n", program_name, *bad);
      return kExitUsage;
    }
  }
  if (vm.count("name")) options.name_pattern = vm["name"].as<std::string>();
  if (vm.count("slurm-job")) options.slurm_job = vm["slurm-job"].as<std::string>();
  if (vm.count("container")) options.container = vm["container"].as<std::string>();
  const int kinds = (options.root_pids.empty() ? 0 : 1) + (options.name_pattern ? 1 : 0) +
                    (options.slurm_job ? 1 : 0) + (options.container ? 1 : 0);
  if (kinds > 1) {
    fmt::print(stderr, "{}: give one of --pid, --name, --slurm-job, --container\n", program_name);
    return kExitUsage;
  }
  // A container's name is what Docker takes: [a-zA-Z0-9][a-zA-Z0-9_.-]+; an id or a pod's UID
  // is of those characters too.
  if (options.container &&
      (options.container->size() < 4 || options.container->size() > 128 ||
       !std::isalnum(static_cast<unsigned char>(options.container->front())) ||
       !std::all_of(options.container->begin(), options.container->end(), [](char c) {
         return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
       }))) {
    fmt::print(stderr, "{}: --container wants a container's id (4 or more of its first hex digits), "
               "its name, or a Kubernetes pod's UID\n", program_name);
    return kExitUsage;
  }
  if (options.name_pattern && options.name_pattern->empty()) {
    fmt::print(stderr, "{}: --name wants a non-empty pattern\n", program_name);
    return kExitUsage;
  }
  if (vm.count("srun")) options.srun_job = vm["srun"].as<std::string>();
  if (vm.count("pdsh")) options.pdsh_hosts = vm["pdsh"].as<std::string>();
  if (options.srun_job && options.pdsh_hosts) {
    fmt::print(stderr, "{}: give --srun or --pdsh, not both\n", program_name);
    return kExitUsage;
  }
  if (vm.count("via")) options.via = vm["via"].as<std::string>();
  if (options.via && (options.srun_job || options.pdsh_hosts || options.container || options.slurm_job)) {
    fmt::print(stderr, "{}: --via collects inside one container: not with --srun, --pdsh, --container "
               "or --slurm-job\n", program_name);
    return kExitUsage;
  }
  if (kinds == 0 && options.via) options.root_pids = {1};  // the container's whole process tree
  if (kinds == 0 && options.srun_job) options.slurm_job = options.srun_job;
  if (kinds == 0 && !options.srun_job && !options.via) {
    const char* job = std::getenv("SLURM_JOB_ID");
    if (options.pdsh_hosts || job == nullptr || *job == '\0') {
      fmt::print(stderr, "{}: say which processes: --pid PID, --name PATTERN or "
                 "--slurm-job JOBID (see --help)\n", program_name);
      return kExitUsage;
    }
    options.slurm_job = job;
  }
  if (!options.root_pids.empty() && (options.srun_job || options.pdsh_hosts)) {
    fmt::print(stderr, "{}: --pid means other processes on each node; with "
               "--srun or --pdsh give --name or --slurm-job\n", program_name);
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> read_collect_options(const po::variables_map& vm, CollectOptions& options,
                                       const std::string& program) {
  program_name = program;
  if (auto failed = parse_selection(vm, options)) return failed;
  if (vm.count("cores")) {
    const std::string kind = vm["cores"].as<std::string>();
    if (kind == "snapshot") options.cores = CoreKind::kSnapshot;
    else if (kind == "full") options.cores = CoreKind::kFull;
    else if (kind == "none") options.cores = CoreKind::kNone;
    else {
      fmt::print(stderr, "{}: --cores wants none, snapshot or full, not '{}'\n", program_name, kind);
      return kExitUsage;
    }
  }
  options.native = vm.count("native") > 0;
  options.locals = vm.count("no-locals") == 0;
  options.nonblocking = vm.count("nonblocking") > 0;
  if (options.native && options.nonblocking) {
    fmt::print(stderr, "{}: --native needs stopped threads: not with --nonblocking\n", program_name);
    return kExitUsage;
  }
  if (vm.count("max-stop")) options.max_stop_ms = vm["max-stop"].as<std::string>();
  if (auto failed = parse_positive(vm, "timeout", 3600, options.timeout_seconds)) return failed;
  if (auto failed = parse_positive(vm, "jobs", 64, options.jobs)) return failed;
  options.output_dir = vm.count("output") ? vm["output"].as<std::string>() : dated_output_dir("hangpy-collect");
  options.node_name = vm.count("node-name") ? vm["node-name"].as<std::string>()
                     : options.via               ? via_node_name(*options.via)
                                                 : default_node_name();
  if (options.node_name.empty() || options.node_name.find('/') != std::string::npos ||
      options.node_name == "." || options.node_name == "..") {
    fmt::print(stderr, "{}: '{}' cannot name a node's directory\n", program_name, options.node_name);
    return kExitUsage;
  }
  options.triage = vm.count("no-triage") == 0;
  if (vm.count("pdsh-rcmd")) options.pdsh_rcmd = vm["pdsh-rcmd"].as<std::string>();
  if (vm.count("local-dir")) {
    if (!options.srun_job) {
      fmt::print(stderr, "{}: --local-dir goes with --srun\n", program_name);
      return kExitUsage;
    }
    options.local_dir = vm["local-dir"].as<std::string>();
    if (options.local_dir->empty() || options.local_dir->front() != '/') {
      fmt::print(stderr, "{}: --local-dir wants an absolute path\n", program_name);
      return kExitUsage;
    }
  }
  if (vm.count("remote-binary")) options.remote_binary = vm["remote-binary"].as<std::string>();
  return std::nullopt;
}

std::optional<int> parse_collect_options(int argc, char** argv, CollectOptions& options) {
  po::options_description visible = collect_visible_options();
  po::options_description all;
  all.add(visible).add_options()("node-only", "");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    fmt::print(stderr, "{}: {} (see --help)\n", program_name, error.what());
    return kExitUsage;
  }
  if (vm.count("help")) {
    print_collect_usage(std::cout, visible);
    return kExitSuccess;
  }
  if (auto failed = read_collect_options(vm, options, "coreanalyze collect")) return failed;
  options.node_only = vm.count("node-only") > 0;
  return std::nullopt;
}

std::vector<std::string> collect_arguments(const CollectOptions& options) {
  std::vector<std::string> argv{"collect"};
  for (int pid : options.root_pids) argv.insert(argv.end(), {"--pid", std::to_string(pid)});
  if (options.name_pattern) argv.insert(argv.end(), {"--name", *options.name_pattern});
  if (options.slurm_job && !options.srun_job) argv.insert(argv.end(), {"--slurm-job", *options.slurm_job});
  if (options.container) argv.insert(argv.end(), {"--container", *options.container});
  if (options.cores == CoreKind::kSnapshot) argv.insert(argv.end(), {"--cores", "snapshot"});
  if (options.cores == CoreKind::kFull) argv.insert(argv.end(), {"--cores", "full"});
  if (options.native) argv.push_back("--native");
  if (!options.locals) argv.push_back("--no-locals");
  if (options.nonblocking) argv.push_back("--nonblocking");
  if (options.max_stop_ms) argv.insert(argv.end(), {"--max-stop", *options.max_stop_ms});
  argv.insert(argv.end(), {"--timeout", std::to_string(options.timeout_seconds), "--jobs",
                           std::to_string(options.jobs), "--output", options.output_dir});
  if (!options.node_name.empty()) argv.insert(argv.end(), {"--node-name", options.node_name});
  if (!options.triage) argv.push_back("--no-triage");
  if (options.srun_job) argv.insert(argv.end(), {"--srun", *options.srun_job});
  if (options.pdsh_hosts) argv.insert(argv.end(), {"--pdsh", *options.pdsh_hosts});
  if (options.pdsh_rcmd) argv.insert(argv.end(), {"--pdsh-rcmd", *options.pdsh_rcmd});
  if (options.local_dir) argv.insert(argv.end(), {"--local-dir", *options.local_dir});
  if (options.remote_binary) argv.insert(argv.end(), {"--remote-binary", *options.remote_binary});
  if (options.via) argv.insert(argv.end(), {"--via", *options.via});
  return argv;
}

std::string dated_output_dir(const std::string& prefix) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  return fmt::format("{}-{}", prefix, stamp);
}

}  // namespace hangpy::jobs
