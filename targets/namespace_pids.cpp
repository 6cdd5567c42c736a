#include "targets/namespace_pids.h"

#include <dirent.h>

#include <cstring>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "base/parse_number.h"
#include "targets/note_records.h"
#include "targets/proc_file.h"

namespace hangpy::targets {
namespace {

constexpr size_t kRecordWords = 2;

}  // namespace

std::vector<int64_t> nspid_ids(const std::string& status_path) {
  std::vector<int64_t> ids;
  auto status = read_proc_file(status_path);
  if (!status) return ids;
  const size_t at = status->find("\nNSpid:");
  if (at == std::string::npos) return ids;
  const size_t end = status->find('\n', at + 1);
  std::istringstream words(status->substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7));
  for (int64_t id = 0; words >> id && ids.size() < 64;) ids.push_back(id);
  return ids;
}

std::vector<cpython::NamespacePid> live_namespace_pids(int pid) {
  std::vector<cpython::NamespacePid> pids;
  const std::vector<int64_t> own = nspid_ids(fmt::format("/proc/{}/status", pid));
  if (own.size() < 2) return pids;  // the reader's namespace, or a kernel without NSpid
  pids.push_back({own.front(), own.back()});
  // Each thread's children file lists the children it forked (CONFIG_PROC_CHILDREN); a child of
  // the process is a child of one of its threads.
  DIR* tasks = opendir(fmt::format("/proc/{}/task", pid).c_str());
  if (tasks == nullptr) return pids;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    auto children = read_proc_file(fmt::format("/proc/{}/task/{}/children", pid, entry->d_name));
    if (!children) continue;
    std::istringstream words(*children);
    for (int64_t child = 0; words >> child && pids.size() <= kMaxNamespaceChildren;) {
      const std::vector<int64_t> ids = nspid_ids(fmt::format("/proc/{}/status", child));
      // A child in a namespace of its own (unshare --fork) has an id in ours and in its own.
      if (ids.size() >= own.size()) pids.push_back({ids.front(), ids[own.size() - 1]});
    }
  }
  closedir(tasks);
  return pids;
}

std::optional<int64_t> host_pid_of(const std::vector<cpython::NamespacePid>& pids, int64_t namespace_pid) {
  for (const cpython::NamespacePid& pid : pids)
    if (pid.namespace_pid == namespace_pid) return pid.pid;
  return std::nullopt;
}

std::vector<std::byte> encode_namespace_pids(const std::vector<cpython::NamespacePid>& pids) {
  std::vector<std::byte> out;
  for (const cpython::NamespacePid& pid : pids)
    append_note_record<kRecordWords>(out, {static_cast<uint64_t>(pid.pid), static_cast<uint64_t>(pid.namespace_pid)});
  return out;
}

std::vector<cpython::NamespacePid> decode_namespace_pids(std::span<const std::byte> desc) {
  std::vector<cpython::NamespacePid> pids;
  for (const auto& words : note_records<kRecordWords>(desc, kMaxNamespaceChildren + 1)) {
    // PIDs are positive 32-bit numbers (pid_max is at most 2^22).
    if (words[0] == 0 || words[1] == 0 || words[0] > INT32_MAX || words[1] > INT32_MAX) continue;
    pids.push_back({static_cast<int64_t>(words[0]), static_cast<int64_t>(words[1])});
  }
  return pids;
}

}  // namespace hangpy::targets
