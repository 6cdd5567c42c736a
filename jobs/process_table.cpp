#include "jobs/process_table.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <set>

#include "base/parse_number.h"
#include "targets/containers.h"
#include "targets/proc_file.h"

namespace hangpy::jobs {
using namespace ::hangpy::targets;
namespace {

// A file of /proc/PID, read through targets' one reader (one size bound for every /proc file).
std::optional<std::string> read_proc_file(int pid, const char* name) {
  return targets::read_proc_file("/proc/" + std::to_string(pid) + "/" + name);
}

std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : text) {
    if (c == '\0') {
      parts.push_back(std::move(part));
      part.clear();
    } else {
      part.push_back(c);
    }
  }
  if (!part.empty()) parts.push_back(std::move(part));
  return parts;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "python", "python3", "python3.11", "python3.13t", "python2.7-dbg": the name CPython installs.
bool is_python_executable(const std::string& path) {
  std::string name = base_name(path);
  // /proc/PID/exe of a deleted or replaced binary ends with " (deleted)".
  if (const size_t space = name.find(' '); space != std::string::npos) name.resize(space);
  return name.rfind("python", 0) == 0;
}

void read_environment(int pid, ProcessEntry& entry) {
  auto environ = read_proc_file(pid, "environ");
  if (!environ) return;
  for (const std::string& variable : split_nul(*environ)) {
    const size_t equals = variable.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = variable.substr(0, equals);
    if (name == "SLURM_JOB_ID") entry.slurm_job_id = variable.substr(equals + 1);
    const auto& wanted = label_variables();
    if (std::find(wanted.begin(), wanted.end(), name) != wanted.end())
      entry.labels[name] = variable.substr(equals + 1);
  }
}

// SLURM puts a job's processes in a cgroup named job_ID (cgroup v1 ".../slurm/uid_U/job_ID/...",
// v2 ".../job_ID/step_S/..."): that finds them even when they cleared their environment.
std::optional<std::string> slurm_job_from_cgroup(int pid) {
  auto cgroup = read_proc_file(pid, "cgroup");
  if (!cgroup) return std::nullopt;
  const std::string marker = "/job_";
  for (size_t at = cgroup->find(marker); at != std::string::npos; at = cgroup->find(marker, at + 1)) {
    size_t end = at + marker.size();
    while (end < cgroup->size() && std::isdigit(static_cast<unsigned char>((*cgroup)[end]))) ++end;
    if (end > at + marker.size()) return cgroup->substr(at + marker.size(), end - at - marker.size());
  }
  return std::nullopt;
}

std::map<int, std::vector<int>> children_of(const std::map<int, ProcessEntry>& table) {
  std::map<int, std::vector<int>> children;
  for (const auto& [pid, entry] : table) children[entry.ppid].push_back(pid);
  return children;
}

// The roots and their descendants, each once, parents before children.
std::vector<int> with_descendants(const std::map<int, ProcessEntry>& table,
                                  const std::vector<int>& roots) {
  const auto children = children_of(table);
  std::vector<int> ordered;
  std::set<int> seen;
  for (int root : roots) {
    if (!table.count(root)) continue;
    std::vector<int> queue{root};
    // Breadth first: a pid recycled into a loop cannot happen in /proc, but `seen` guards it.
    for (size_t next = 0; next < queue.size(); ++next) {
      const int pid = queue[next];
      if (!seen.insert(pid).second) continue;
      ordered.push_back(pid);
      if (auto found = children.find(pid); found != children.end())
        queue.insert(queue.end(), found->second.begin(), found->second.end());
    }
  }
  return ordered;
}

}  // namespace

std::string ProcessEntry::command_line() const {
  if (argv.empty()) return "[" + comm + "]";
  std::string line;
  for (const std::string& argument : argv) {
    if (!line.empty()) line += ' ';
    line += argument;
  }
  return line;
}

const std::vector<std::string>& label_variables() {
  static const std::vector<std::string> names{
      "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "SLURM_PROCID",
      "SLURM_LOCALID", "SLURM_NODEID", "SLURM_STEP_ID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"};
  return names;
}

std::optional<ProcessEntry> read_process(int pid) {
  // The fields after the command name, which may itself hold spaces and ')': state and parent.
  auto stat = targets::read_proc_stat("/proc/" + std::to_string(pid) + "/stat");
  ProcessEntry entry;
  entry.pid = pid;
  if (!stat || stat->size() < 2) return std::nullopt;
  auto parent = parse_decimal<int>((*stat)[1]);
  if (!parent) return std::nullopt;
  entry.state = stat->front()[0];
  entry.ppid = *parent;
  if (auto comm = read_proc_file(pid, "comm")) {
    entry.comm = *comm;
    while (!entry.comm.empty() && entry.comm.back() == '\n') entry.comm.pop_back();
  }
  if (auto cmdline = read_proc_file(pid, "cmdline")) entry.argv = split_nul(*cmdline);
  char target[PATH_MAX];
  const std::string exe_link = "/proc/" + std::to_string(pid) + "/exe";
  if (const ssize_t length = readlink(exe_link.c_str(), target, sizeof target - 1); length > 0)
    entry.exe.assign(target, static_cast<size_t>(length));
  entry.runs_python = is_python_executable(entry.exe);
  if (auto maps = read_proc_file(pid, "maps")) {
    // An embedding program (uwsgi, a C++ trainer) maps libpython; python3.x itself may not.
    if (maps->find("/libpython") != std::string::npos) entry.runs_python = true;
  } else {
    entry.maps_readable = false;
  }
  if (!entry.runs_python && entry.exe.empty() && !entry.argv.empty())
    entry.runs_python = is_python_executable(entry.argv.front());  // exe unreadable: best guess
  read_environment(pid, entry);
  if (!entry.slurm_job_id) entry.slurm_job_id = slurm_job_from_cgroup(pid);
  if (auto cgroup = read_proc_file(pid, "cgroup")) {
    if (auto container = container_of_cgroup(*cgroup)) {
      if (!container->id.empty()) entry.container_id = container->id;
      if (!container->pod_uid.empty()) entry.pod_uid = container->pod_uid;
    }
  }
  return entry;
}

std::map<int, ProcessEntry> read_process_table() {
  std::map<int, ProcessEntry> table;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return table;
  while (const dirent* item = readdir(proc)) {
    auto pid = parse_decimal<int>(item->d_name);
    if (!pid || *pid <= 0) continue;
    if (auto entry = read_process(*pid)) table.emplace(*pid, std::move(*entry));
  }
  closedir(proc);
  return table;
}

std::vector<int> process_tree(const std::map<int, ProcessEntry>& table, int root) {
  return with_descendants(table, {root});
}

std::vector<int> processes_named(const std::map<int, ProcessEntry>& table,
                                 const std::string& pattern) {
  std::vector<int> matches;
  for (const auto& [pid, entry] : table) {
    if (entry.command_line().find(pattern) != std::string::npos ||
        entry.comm.find(pattern) != std::string::npos ||
        base_name(entry.exe).find(pattern) != std::string::npos)
      matches.push_back(pid);
  }
  return with_descendants(table, matches);
}

std::vector<int> processes_of_container(const std::map<int, ProcessEntry>& table, const std::string& which,
                                        const std::vector<NamedContainer>& names) {
  const bool hex = std::all_of(which.begin(), which.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  std::set<std::string> named_ids;
  for (const NamedContainer& container : names)
    if (container.name == which) named_ids.insert(container.id);
  std::vector<int> matches;
  for (const auto& [pid, entry] : table) {
    const bool by_id = hex && entry.container_id && entry.container_id->starts_with(which);
    const bool by_name = entry.container_id && named_ids.contains(*entry.container_id);
    const bool by_pod = entry.pod_uid && entry.pod_uid->starts_with(which);
    if (by_id || by_name || by_pod) matches.push_back(pid);
  }
  return matches;
}

std::vector<int> processes_of_slurm_job(const std::map<int, ProcessEntry>& table,
                                        const std::string& job_id) {
  std::vector<int> matches;
  for (const auto& [pid, entry] : table)
    if (entry.slurm_job_id == job_id) matches.push_back(pid);
  return matches;
}

std::vector<int> ancestors(const std::map<int, ProcessEntry>& table, int pid) {
  std::vector<int> chain;
  std::set<int> seen{pid};
  for (auto found = table.find(pid); found != table.end();) {
    const int parent = found->second.ppid;
    if (parent <= 0 || !seen.insert(parent).second) break;
    chain.push_back(parent);
    found = table.find(parent);
  }
  return chain;
}

}  // namespace hangpy::jobs
