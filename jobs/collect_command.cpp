#include "jobs/collect_command.h"
#include "jobs/host_list.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/child_process.h"
#include "jobs/collect_node.h"
#include "jobs/collect_options.h"
#include "jobs/collect_via.h"
#include "base/exit_codes.h"
#include "base/output_file.h"

namespace fs = std::filesystem;

namespace hangpy::jobs {
namespace {

std::vector<std::string> split_words(const std::string& text, char separator) {
  std::vector<std::string> words;
  std::stringstream stream(text);
  for (std::string word; std::getline(stream, word, separator);) {
    while (!word.empty() && (word.back() == '\n' || word.back() == ' ')) word.pop_back();
    if (!word.empty()) words.push_back(word);
  }
  return words;
}

// The same collection on one node, as srun or pdsh run it there.
std::vector<std::string> node_command(const CollectOptions& options, const std::string& binary,
                                      const std::string& node_name) {
  CollectOptions on_node = options;
  on_node.srun_job.reset();
  on_node.pdsh_hosts.reset();
  on_node.pdsh_rcmd.reset();
  on_node.local_dir.reset();
  on_node.remote_binary.reset();
  on_node.triage = false;
  on_node.output_dir = options.local_dir.value_or(options.output_dir);
  on_node.node_name = node_name;  // "": the node's own ($SLURMD_NODENAME, its host name)
  std::vector<std::string> argv{binary};
  for (const std::string& word : collect_arguments(on_node)) argv.push_back(word);
  argv.push_back("--node-only");
  return argv;
}

// How long a whole node may take: every process's analysis and core one after the other, at
// worst, and the launcher's own start.
std::chrono::seconds node_time_limit(const CollectOptions& options) {
  return std::chrono::seconds(options.timeout_seconds * 20 + 120);
}

struct Launch {
  std::vector<std::string> expected_nodes;  // empty when unknown
  ChildResult result;
};

void copy_node_dirs(const CollectOptions& options, const std::vector<std::string>& nodes);

Launch launch_with_srun(const CollectOptions& options, const std::string& binary) {
  Launch launch;
  const std::string& job = *options.srun_job;
  ChildResult nodes = run_child({{"squeue", "-h", "-j", job, "-o", "%N"}, std::nullopt, true},
                                std::chrono::seconds(30));
  std::vector<std::string> names;
  if (nodes.started && nodes.exit_code == 0 && !split_words(nodes.output, '\n').empty()) {
    ChildResult expanded = run_child(
        {{"scontrol", "show", "hostnames", split_words(nodes.output, '\n').front()}, std::nullopt, true},
        std::chrono::seconds(30));
    if (expanded.exit_code == 0) names = split_words(expanded.output, '\n');
  }
  if (names.empty()) {
    launch.result.start_error = nodes.started
        ? fmt::format("squeue -j {} lists no nodes: is the job running? {}", job, nodes.errors)
        : nodes.start_error + " (is SLURM's client installed here?)";
    return launch;
  }
  launch.expected_nodes = names;
  const std::string count = std::to_string(names.size());
  // --overlap: the job's steps hold every CPU of the allocation; this step shares them.
  std::vector<std::string> argv{"srun", "--overlap", "--jobid", job, "--nodes", count, "--ntasks",
                                count, "--ntasks-per-node", "1", "--kill-on-bad-exit=0"};
  // The node name is SLURMD_NODENAME, which srun sets in each task's environment.
  for (const std::string& word : node_command(options, binary, "")) argv.push_back(word);
  fmt::print(stderr, "coreanalyze collect: on {} node(s) of job {} through srun\n", count, job);
  launch.result = run_child({argv, std::nullopt, false}, node_time_limit(options));
  if (options.local_dir) copy_node_dirs(options, names);
  return launch;
}

// --local-dir: each node's LOCAL/NODE, through a one-task srun step on that node running tar,
// into DIR/NODE. One node at a time: a step's output is one stream, and the tar files can be big.
void copy_node_dirs(const CollectOptions& options, const std::vector<std::string>& nodes) {
  for (const std::string& node : nodes) {
    const std::string archive = (fs::path(options.output_dir) / ("." + node + ".tar")).string();
    ChildResult packed = run_child(
        {{"srun", "--overlap", "--jobid", *options.srun_job, "--nodelist", node, "--nodes", "1",
          "--ntasks", "1", "tar", "-C", *options.local_dir, "-cf", "-", node}, archive, true},
        node_time_limit(options));
    ChildResult unpacked;
    if (packed.exit_code == 0)
      unpacked = run_child({{"tar", "-C", options.output_dir, "-xf", archive}, std::nullopt, true},
                           node_time_limit(options));
    std::error_code ignored;
    fs::remove(archive, ignored);
    if (packed.exit_code != 0 || unpacked.exit_code != 0)
      fmt::print(stderr, "coreanalyze collect: {}: {}:{}/{} not copied: {}{}\n", node, node,
                 *options.local_dir, node, packed.start_error, packed.exit_code != 0 ? packed.errors
                                                                                   : unpacked.errors);
  }
}

Launch launch_with_pdsh(const CollectOptions& options, const std::string& binary) {
  Launch launch;
  std::string rcmd = options.pdsh_rcmd.value_or("");
  if (rcmd.empty()) {
    if (const char* from_environment = std::getenv("PDSH_RCMD_TYPE")) rcmd = from_environment;
  }
  std::vector<std::string> pdsh{"pdsh"};
  if (!rcmd.empty()) pdsh.insert(pdsh.end(), {"-R", rcmd});
  pdsh.insert(pdsh.end(), {"-w", *options.pdsh_hosts});
  // The nodes expected to answer: the host list expanded here (host_list.h); a list read from a
  // file (^FILE) is pdsh's to read, and `pdsh -q` prints it, last.
  if (!options.pdsh_hosts->starts_with("^")) {
    auto hosts = expand_host_list(*options.pdsh_hosts);
    if (!hosts) {
      launch.result.start_error = hosts.error().message;
      return launch;
    }
    launch.expected_nodes = std::move(*hosts);
  } else {
    std::vector<std::string> query = pdsh;
    query.push_back("-q");
    ChildResult listed = run_child({query, std::nullopt, true}, std::chrono::seconds(30));
    if (!listed.started) {
      launch.result.start_error = listed.start_error + " (install pdsh)";
      return launch;
    }
    const auto lines = split_words(listed.output, '\n');
    if (!lines.empty()) {
      for (const std::string& part : split_words(lines.back(), ',')) {
        auto hosts = expand_host_list(part);
        if (hosts) launch.expected_nodes.insert(launch.expected_nodes.end(), hosts->begin(), hosts->end());
      }
    }
  }
  // pdsh's exec module runs the command on this machine for every "host": each names its
  // directory after pdsh's %h, or they would all write into this host's.
  const std::string node_name = rcmd == "exec" ? "%h" : "";
  std::vector<std::string> argv = pdsh;
  for (const std::string& word : node_command(options, binary, node_name)) argv.push_back(word);
  fmt::print(stderr, "coreanalyze collect: on {} through pdsh\n", *options.pdsh_hosts);
  launch.result = run_child({argv, std::nullopt, false}, node_time_limit(options));
  return launch;
}

// DIR/manifest.json: every node's manifest, and the nodes that sent none.
int gather(const CollectOptions& options, const std::vector<std::string>& expected_nodes,
           int launch_exit_code) {
  nlohmann::json top;
  top["output"] = options.output_dir;
  top["nodes"] = nlohmann::json::object();
  std::set<std::string> found;
  size_t taken = 0, failed = 0, cores_missing = 0;
  std::error_code error;
  for (const auto& item : fs::directory_iterator(options.output_dir, error)) {
    const fs::path manifest_path = item.path() / "manifest.json";
    std::ifstream in(manifest_path);
    if (!in) continue;
    nlohmann::json node = nlohmann::json::parse(in, nullptr, false);
    if (node.is_discarded()) continue;
    const std::string name = item.path().filename().string();
    found.insert(name);
    taken += node.value("taken", 0u);
    failed += node.value("failed", 0u);
    cores_missing += node.value("cores_missing", 0u);
    top["nodes"][name] = std::move(node);
  }
  std::vector<std::string> missing;
  for (const std::string& node : expected_nodes)
    if (!found.count(node)) missing.push_back(node);
  top["missing_nodes"] = missing;
  top["taken"] = taken;
  top["failed"] = failed;
  top["cores_missing"] = cores_missing;
  auto written = write_file_atomically((fs::path(options.output_dir) / "manifest.json").string(),
                                       [&](std::ostream& out) { out << top.dump(2) << "\n"; });
  if (!written) fmt::print(stderr, "coreanalyze collect: {}\n", written.error().describe());
  if (!missing.empty()) {
    std::string names;
    for (const auto& node : missing) names += (names.empty() ? "" : ", ") + node;
    fmt::print(stderr, "coreanalyze collect: no results from {} (is {} on a file system every "
               "node shares? see the launcher's messages above)\n", names, options.output_dir);
  }
  fmt::print(stderr, "coreanalyze collect: {} node(s), {} Python process(es) taken, {} failed\n",
             found.size(), taken, failed);
  if (found.empty()) return kExitBadInput;
  if (!missing.empty() || failed > 0 || cores_missing > 0 || launch_exit_code != 0) return kExitPartial;
  return kExitSuccess;
}

// The triage subcommand, when this coreanalyze has one (it prints its own usage for --help).
bool has_triage(const std::string& self) {
  ChildResult help = run_child({{self, "triage", "--help"}, std::nullopt, true}, std::chrono::seconds(10));
  return help.exit_code == 0 && help.output.find("coreanalyze triage") != std::string::npos;
}

int finish(const CollectOptions& options, const std::string& self, int exit_code) {
  if (options.triage && has_triage(self)) {
    // The verdict stays beside what it was drawn from (DIR/triage.txt), for whoever reads the
    // directory later: a capture made by a trap or by `watch` has no one watching its output.
    const std::string saved = (fs::path(options.output_dir) / "triage.txt").string();
    fmt::print(stderr, "coreanalyze collect: coreanalyze triage {} (kept in {})\n", options.output_dir, saved);
    std::fflush(stderr);
    ChildResult triage = run_child({{self, "triage", options.output_dir}, saved, false},
                                   std::chrono::hours(1));
    std::ifstream verdict(saved);
    std::cout << verdict.rdbuf();
    std::cout.flush();
    (void)triage;
  } else {
    fmt::print(stderr, "coreanalyze collect: results in {} (NODE/PID.json, NODE/manifest.json, "
               "manifest.json)\n", options.output_dir);
  }
  return exit_code;
}

}  // namespace

int run_collect(int argc, char** argv) {
  CollectOptions options;
  if (auto exit_code = parse_collect_options(argc, argv, options)) return *exit_code;
  const std::string self = this_program();
  std::error_code error;
  // Absolute: srun's and pdsh's tasks may start in another directory.
  options.output_dir = fs::absolute(options.output_dir, error).lexically_normal().string();
  while (options.output_dir.size() > 1 && options.output_dir.back() == '/') options.output_dir.pop_back();
  fs::create_directories(options.output_dir, error);
  if (error) {
    fmt::print(stderr, "coreanalyze collect: {}: {}\n", options.output_dir, error.message());
    return kExitBadInput;
  }
  if (options.node_only) return collect_on_this_node(options, self).exit_code;
  if (options.srun_job || options.pdsh_hosts) {
    const std::string binary = options.remote_binary.value_or(self);
    Launch launch = options.srun_job ? launch_with_srun(options, binary)
                                     : launch_with_pdsh(options, binary);
    if (!launch.result.started && !launch.result.start_error.empty()) {
      fmt::print(stderr, "coreanalyze collect: {}\n", launch.result.start_error);
      return kExitBadInput;
    }
    if (launch.result.timed_out)
      fmt::print(stderr, "coreanalyze collect: the launcher was killed after {} s\n",
                 node_time_limit(options).count());
    const int exit_code = gather(options, launch.expected_nodes, launch.result.exit_code);
    return finish(options, self, exit_code);
  }
  const int node_exit = options.via ? collect_via(options, self) : collect_on_this_node(options, self).exit_code;
  if (node_exit == kExitBadInput) return node_exit;  // nothing found, or DIR not writable: said
  const int exit_code = gather(options, {options.node_name}, 0);
  return finish(options, self, node_exit != kExitSuccess ? node_exit : exit_code);
}

}  // namespace hangpy::jobs
