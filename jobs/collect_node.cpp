#include "jobs/collect_node.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "base/last_line.h"
#include "base/child_process.h"
#include "base/exit_codes.h"
#include "base/output_file.h"
#include "jobs/process_table.h"
#include "targets/container_names.h"

namespace fs = std::filesystem;

namespace hangpy::jobs {
using namespace ::hangpy::targets;
namespace {

using Clock = std::chrono::steady_clock;

// One selected process: what /proc says of it and what became of it.
struct Collected {
  ProcessEntry entry;
  std::optional<std::string> skipped;  // why nothing was taken
  std::optional<std::string> json_file;
  std::optional<std::string> core_file;
  std::vector<std::string> errors;
  bool not_permitted = false;
  double seconds = 0;
};

std::string selection_text(const CollectOptions& options) {
  if (!options.root_pids.empty()) {
    std::string pids;
    for (int pid : options.root_pids) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
    return "the process tree under pid " + pids;
  }
  if (options.name_pattern) return "processes named '" + *options.name_pattern + "'";
  if (options.container) return "the processes of container " + *options.container;
  return "the processes of SLURM job " + options.slurm_job.value_or("?");
}

// The selected pids, without this collector, its ancestors (srun's step, pdsh, the shell that
// started it, whose command lines may hold the pattern) and its descendants.
std::vector<int> select_processes(const CollectOptions& options,
                                  const std::map<int, ProcessEntry>& table) {
  std::vector<int> selected;
  if (!options.root_pids.empty()) {
    for (int root : options.root_pids) {
      auto tree = process_tree(table, root);
      selected.insert(selected.end(), tree.begin(), tree.end());
    }
  } else if (options.name_pattern) {
    selected = processes_named(table, *options.name_pattern);
  } else if (options.container) {
    selected = processes_of_container(table, *options.container, named_containers());
  } else if (options.slurm_job) {
    selected = processes_of_slurm_job(table, *options.slurm_job);
  }
  std::set<int> excluded{getpid()};
  for (int ancestor : ancestors(table, getpid())) excluded.insert(ancestor);
  for (int descendant : process_tree(table, getpid())) excluded.insert(descendant);
  std::vector<int> kept;
  std::set<int> seen;
  for (int pid : selected)
    if (!excluded.count(pid) && seen.insert(pid).second) kept.push_back(pid);
  return kept;
}

std::optional<std::string> why_skipped(const ProcessEntry& entry) {
  if (entry.zombie())
    return std::string("zombie: it has exited and its parent has not reaped it; nothing to read");
  if (!entry.runs_python) {
    return fmt::format("runs no Python ({}{})", entry.exe.empty() ? entry.comm : entry.exe,
                       entry.maps_readable ? "" : "; its maps are not readable by this user");
  }
  return std::nullopt;
}

std::string snapshot_name(int pid) { return fmt::format("{}.snapshot.core", pid); }

// --cores snapshot: the same run writes the JSON and the snapshot core (the pages it read while
// the process was stopped), so the process is stopped once and no whole core touches the disk.
std::vector<std::string> analysis_command(const CollectOptions& options, const std::string& self,
                                          const fs::path& node_dir, int pid) {
  std::vector<std::string> argv{self, "--pid", std::to_string(pid), "--json"};
  if (options.cores == CoreKind::kSnapshot) {
    argv.push_back("--snapshot");
    argv.push_back((node_dir / snapshot_name(pid)).string());
  }
  if (options.native) argv.push_back("--native");
  if (options.locals) argv.push_back("--locals");
  if (options.nonblocking) argv.push_back("--nonblocking");
  if (options.max_stop_ms) {
    argv.push_back("--max-stop");
    argv.push_back(*options.max_stop_ms);
  }
  return argv;
}

std::string ptrace_hint() {
  std::ifstream scope("/proc/sys/kernel/yama/ptrace_scope");
  int value = -1;
  std::string yama;
  if (scope >> value) yama = fmt::format("; kernel.yama.ptrace_scope is {}", value);
  // In a container (run there through `collect --via`, or by hand), root lacks CAP_SYS_PTRACE
  // unless the container was given it.
  std::error_code ignored;
  const bool in_container = fs::exists("/run/.containerenv", ignored) || fs::exists("/.dockerenv", ignored) ||
                            std::getenv("KUBERNETES_SERVICE_HOST") != nullptr;
  return fmt::format("run the collection as the job's user or as root (CAP_SYS_PTRACE), with no "
                     "debugger attached to the processes{}{}", yama,
                     in_container ? "; in a container, root has CAP_SYS_PTRACE only when the container "
                                    "is given it (--cap-add SYS_PTRACE, a pod's securityContext)"
                                  : "");
}

// Takes the JSON stacks of every Python process, `jobs` at a time.
void take_stacks(const CollectOptions& options, const std::string& self, const fs::path& node_dir,
                 std::vector<Collected>& processes) {
  std::vector<ChildCommand> commands;
  std::vector<Collected*> order;
  for (Collected& process : processes) {
    if (process.skipped) continue;
    const std::string file = fmt::format("{}.json", process.entry.pid);
    commands.push_back({analysis_command(options, self, node_dir, process.entry.pid),
                        (node_dir / file).string(), true});
    order.push_back(&process);
  }
  const auto results =
      run_children(commands, options.jobs, std::chrono::seconds(options.timeout_seconds));
  for (size_t i = 0; i < results.size(); ++i) {
    Collected& process = *order[i];
    const ChildResult& result = results[i];
    const fs::path file = *commands[i].stdout_path;
    process.seconds = result.seconds;
    std::error_code ignored;
    const bool has_output = fs::file_size(file, ignored) > 0 && !ignored;
    if (options.cores == CoreKind::kSnapshot) {
      const std::string snapshot = snapshot_name(process.entry.pid);
      std::error_code missing;
      if (fs::file_size(node_dir / snapshot, missing) > 0 && !missing)
        process.core_file = snapshot;
      else if (result.started && !result.timed_out && has_output)
        process.errors.push_back("no snapshot core: " + without_line_end(result.errors));
    }
    // 5: printed, but some stacks partial; the JSON says which.
    if (result.started && !result.timed_out && (result.exit_code == kExitSuccess ||
                                                result.exit_code == kExitPartial) && has_output) {
      process.json_file = file.filename().string();
      if (result.exit_code == kExitPartial) process.errors.push_back("some stacks are partial");
      continue;
    }
    fs::remove(file, ignored);
    if (!result.started) {
      process.errors.push_back(result.start_error);
    } else if (result.timed_out) {
      process.errors.push_back(fmt::format("the analysis took longer than {} s and was killed",
                                           options.timeout_seconds));
    } else {
      std::string message = without_line_end(result.errors);
      if (message.empty()) message = fmt::format("coreanalyze exited with {}", result.exit_code);
      process.errors.push_back(message);
      process.not_permitted = result.exit_code == kExitNotPermitted;
    }
  }
}

// What gcore will write, at most: the readable mappings that are writable or anonymous (gdb
// leaves out read-only file mappings, which the binaries on disk hold).
uint64_t estimated_core_bytes(int pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  uint64_t total = 0;
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode >> path;
    const size_t dash = range.find('-');
    if (dash == std::string::npos || perms.size() < 2 || perms[0] != 'r') continue;
    if (perms[1] != 'w' && !path.empty() && path[0] == '/') continue;
    if (path == "[vsyscall]" || path == "[vvar]") continue;
    const uint64_t start = std::strtoull(range.substr(0, dash).c_str(), nullptr, 16);
    const uint64_t end = std::strtoull(range.substr(dash + 1).c_str(), nullptr, 16);
    if (end > start) total += end - start;
  }
  return total;
}

uint64_t free_bytes(const fs::path& directory) {
  struct statvfs info{};
  if (statvfs(directory.c_str(), &info) != 0) return 0;
  return static_cast<uint64_t>(info.f_bavail) * info.f_frsize;
}

std::string megabytes(uint64_t bytes) { return fmt::format("{:.0f} MB", bytes / 1e6); }

// --cores full: one core at a time (they are large), written by gcore.
void take_core(const CollectOptions& options, const fs::path& node_dir, Collected& process) {
  const int pid = process.entry.pid;
  const uint64_t needed = estimated_core_bytes(pid);
  const uint64_t available = free_bytes(node_dir);
  // A margin of 5% and 64 MB: the estimate is of mappings, the file system has its own overhead.
  if (needed + needed / 20 + (64ull << 20) > available) {
    process.errors.push_back(fmt::format("no core taken: it needs about {}, {} has {} free",
                                         megabytes(needed), node_dir.string(), megabytes(available)));
    return;
  }
  const fs::path prefix = node_dir / fmt::format(".{}.gcore", pid);
  const fs::path whole = fmt::format("{}.{}", prefix.string(), pid);  // gcore adds .PID
  const auto limit = std::chrono::seconds(options.timeout_seconds);
  ChildResult dumped = run_child({{"gcore", "-o", prefix.string(), std::to_string(pid)}, std::nullopt,
                                  true}, limit);
  std::error_code ignored;
  if (!dumped.started || dumped.timed_out || dumped.exit_code != 0 || !fs::exists(whole)) {
    fs::remove(whole, ignored);
    std::string why = !dumped.started ? dumped.start_error + " (gcore comes with gdb)"
                      : dumped.timed_out ? fmt::format("gcore took longer than {} s", options.timeout_seconds)
                                         : without_line_end(dumped.errors);
    process.errors.push_back("no core taken: " + why);
    return;
  }
  const std::string name = fmt::format("{}.core", pid);
  fs::rename(whole, node_dir / name, ignored);
  if (ignored) process.errors.push_back("core not kept: " + ignored.message());
  else process.core_file = name;
}

nlohmann::json process_json(const Collected& process) {
  const ProcessEntry& entry = process.entry;
  nlohmann::json item;
  item["pid"] = entry.pid;
  item["ppid"] = entry.ppid;
  item["state"] = std::string(1, entry.state);
  item["comm"] = entry.comm;
  item["exe"] = entry.exe;
  item["cmdline"] = entry.argv;
  item["python"] = entry.runs_python;
  item["labels"] = entry.labels;
  item["slurm_job_id"] = entry.slurm_job_id ? nlohmann::json(*entry.slurm_job_id) : nullptr;
  item["skipped"] = process.skipped ? nlohmann::json(*process.skipped) : nullptr;
  item["json"] = process.json_file ? nlohmann::json(*process.json_file) : nullptr;
  item["core"] = process.core_file ? nlohmann::json(*process.core_file) : nullptr;
  item["errors"] = process.errors;
  item["seconds"] = process.seconds;
  return item;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

NodeCollection collect_on_this_node(const CollectOptions& options, const std::string& self) {
  const auto started = Clock::now();
  NodeCollection collection;
  const fs::path node_dir = fs::path(options.output_dir) / options.node_name;
  std::error_code error;
  fs::create_directories(node_dir, error);
  if (error) {
    fmt::print(stderr, "coreanalyze collect: {}: {}\n", node_dir.string(), error.message());
    collection.exit_code = kExitBadInput;
    return collection;
  }
  const auto table = read_process_table();
  std::vector<Collected> processes;
  for (int pid : select_processes(options, table)) {
    Collected process;
    process.entry = table.at(pid);
    process.skipped = why_skipped(process.entry);
    processes.push_back(std::move(process));
  }
  take_stacks(options, self, node_dir, processes);
  if (options.cores == CoreKind::kFull) {
    for (Collected& process : processes)
      if (!process.skipped) take_core(options, node_dir, process);
  }

  size_t taken = 0, failed = 0, refused = 0, skipped = 0, cores_missing = 0;
  for (const Collected& process : processes) {
    if (!process.skipped && options.cores != CoreKind::kNone && !process.core_file) ++cores_missing;
    if (process.skipped) {
      ++skipped;
      fmt::print(stderr, "coreanalyze collect: {}: pid {} skipped: {}\n", options.node_name,
                 process.entry.pid, *process.skipped);
      continue;
    }
    if (process.json_file) ++taken;
    else ++failed;
    if (process.not_permitted) ++refused;
    for (const std::string& message : process.errors)
      fmt::print(stderr, "coreanalyze collect: {}: pid {}: {}\n", options.node_name,
                 process.entry.pid, message);
  }
  if (refused > 0)
    fmt::print(stderr, "coreanalyze collect: {}: {} process(es) could not be read: not permitted; "
               "{}\n", options.node_name, refused, ptrace_hint());
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (!processes.empty()) fmt::print(stderr, "coreanalyze collect: {}: {} Python process(es) taken, {} failed, {} skipped{}, "
             "in {:.2f} s\n", options.node_name, taken, failed, skipped,
             cores_missing ? fmt::format(", {} core(s) not taken", cores_missing) : "", seconds);

  nlohmann::json& manifest = collection.manifest;
  manifest["node"] = options.node_name;
  manifest["host"] = host_name();
  manifest["collector_pid"] = getpid();
  manifest["selection"] = selection_text(options);
  manifest["seconds"] = seconds;
  manifest["processes"] = nlohmann::json::array();
  for (const Collected& process : processes) manifest["processes"].push_back(process_json(process));
  manifest["taken"] = taken;
  manifest["failed"] = failed;
  manifest["skipped"] = skipped;
  manifest["cores_missing"] = cores_missing;
  auto written = write_file_atomically((node_dir / "manifest.json").string(),
                                       [&](std::ostream& out) { out << manifest.dump(2) << "\n"; });
  if (!written) {
    fmt::print(stderr, "coreanalyze collect: {}\n", written.error().describe());
    collection.exit_code = kExitBadInput;
  } else if (processes.size() == skipped) {
    fmt::print(stderr, "coreanalyze collect: {}: no {}process found among {}\n", options.node_name,
               processes.empty() ? "" : "Python ", selection_text(options));
    collection.exit_code = kExitBadInput;
  } else if (taken == 0 && refused == failed) {
    collection.exit_code = kExitNotPermitted;
  } else {
    collection.exit_code = failed > 0 || cores_missing > 0 ? kExitPartial : kExitSuccess;
  }
  return collection;
}

}  // namespace hangpy::jobs
