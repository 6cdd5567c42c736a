#include "targets/file_descriptors.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/parse_number.h"
#include "base/printable.h"
#include "targets/inet_address.h"
#include "targets/proc_file.h"

namespace hangpy::targets {
namespace {

// The socket of `inode` in one of /proc/PID/net's inet tables.
std::optional<std::string> inet_socket(int pid, std::string_view table, uint64_t inode) {
  auto text = read_proc_file(fmt::format("/proc/{}/net/{}", pid, table));
  if (!text) return std::nullopt;
  const bool v6 = table.ends_with('6');
  const bool tcp = table.starts_with("tcp");
  std::istringstream lines(*text);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode_text;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode_text))
      continue;
    if (parse_decimal<uint64_t>(inode_text) != inode) continue;
    auto local_address = v6 ? ipv6_address(local) : ipv4_address(local);
    auto remote_address = v6 ? ipv6_address(remote) : ipv4_address(remote);
    if (!local_address || !remote_address) return std::nullopt;
    const std::string protocol = tcp ? "TCP" : "UDP";
    if (tcp && state == "0A") return fmt::format("{} listening on {}", protocol, *local_address);
    return fmt::format("{} {} -> {}", protocol, *local_address, *remote_address);
  }
  return std::nullopt;
}

std::optional<std::string> unix_socket(int pid, uint64_t inode) {
  auto text = read_proc_file(fmt::format("/proc/{}/net/unix", pid));
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string slot, references, protocol, flags, type, state, inode_text, path;
    if (!(fields >> slot >> references >> protocol >> flags >> type >> state >> inode_text)) continue;
    if (parse_decimal<uint64_t>(inode_text) != inode) continue;
    fields >> path;
    return path.empty() ? std::string("unix socket (unnamed)") : "unix socket " + printable(path);
  }
  return std::nullopt;
}

// How much of other processes a pipe's other end is looked for in: its parent, children and
// siblings (who share a pipe with whom, in a job: a launcher and its workers, a pool and its
// feeder), a bounded number of descriptors each.
constexpr size_t kMaxPipePartners = 64;

std::optional<std::string> link_of(const std::string& path) {
  std::array<char, 4096> buffer{};
  const ssize_t length = readlink(path.c_str(), buffer.data(), buffer.size() - 1);
  if (length <= 0) return std::nullopt;
  return std::string(buffer.data(), static_cast<size_t>(length));
}


std::optional<int> parent_of(int pid) {
  auto fields = read_proc_stat(fmt::format("/proc/{}/stat", pid));
  if (!fields || fields->size() < 2) return std::nullopt;
  const std::optional<int> parent = parse_decimal<int>((*fields)[1]);
  if (!parent || *parent <= 0) return std::nullopt;
  return parent;
}

std::vector<int> children_of(int pid) {
  std::vector<int> children;
  DIR* tasks = opendir(fmt::format("/proc/{}/task", pid).c_str());
  if (tasks == nullptr) return children;
  while (dirent* task = readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    auto text = read_proc_file(fmt::format("/proc/{}/task/{}/children", pid, task->d_name));
    if (!text) continue;
    std::istringstream list(*text);
    int child = 0;
    while (list >> child && children.size() < kMaxPipePartners) children.push_back(child);
  }
  closedir(tasks);
  return children;
}

// The descriptors of `pid` open on `link` (a "pipe:[N]"), other than `except_fd`: (fd, access).
std::vector<std::pair<int, int>> descriptors_on(int pid, const std::string& link, int except_fd) {
  std::vector<std::pair<int, int>> found;
  DIR* fds = opendir(fmt::format("/proc/{}/fd", pid).c_str());
  if (fds == nullptr) return found;
  size_t looked = 0;
  while (dirent* entry = readdir(fds)) {
    if (entry->d_name[0] == '.') continue;
    if (++looked > kMaxDescriptorsLooked) break;
    const std::optional<int> fd = parse_decimal<int>(entry->d_name);
    if (!fd || *fd == except_fd) continue;
    if (link_of(fmt::format("/proc/{}/fd/{}", pid, *fd)) != link) continue;
    if (auto mode = access_mode(pid, *fd)) found.emplace_back(*fd, *mode);
  }
  closedir(fds);
  return found;
}

std::string command_of(int pid) {
  auto comm = read_proc_file(fmt::format("/proc/{}/comm", pid));
  if (!comm) return "?";
  while (!comm->empty() && comm->back() == '\n') comm->pop_back();
  return printable(*comm, 64);
}

// Who holds a pipe's other end: the writers of a read end, the readers of a write end, looked for
// in the process itself, its parent, children and siblings. A reader that holds the write end
// itself waits for an end of file that cannot come while it does (a classic after fork).
std::optional<std::string> pipe_partners(int pid, int fd, const std::string& link, std::vector<int>& other_pids) {
  const std::optional<int> mode = access_mode(pid, fd);
  if (!mode || (*mode != O_RDONLY && *mode != O_WRONLY)) return std::nullopt;
  const int wanted = *mode == O_RDONLY ? O_WRONLY : O_RDONLY;
  const char* end = wanted == O_WRONLY ? "write" : "read";
  std::vector<int> candidates{pid};
  const std::optional<int> parent = parent_of(pid);
  if (parent) candidates.push_back(*parent);
  for (int child : children_of(pid)) candidates.push_back(child);
  if (parent) {
    for (int sibling : children_of(*parent))
      if (sibling != pid) candidates.push_back(sibling);
  }
  std::vector<std::string> holders;
  bool itself = false;
  for (size_t i = 0; i < candidates.size() && i < kMaxPipePartners; ++i) {
    for (const auto& [other_fd, other_mode] : descriptors_on(candidates[i], link, candidates[i] == pid ? fd : -1)) {
      if (other_mode != wanted && other_mode != O_RDWR) continue;
      if (candidates[i] == pid) {
        itself = true;
        holders.push_back(fmt::format("this process (fd {})", other_fd));
      } else {
        holders.push_back(fmt::format("PID {} ({}, fd {})", candidates[i], command_of(candidates[i]), other_fd));
        other_pids.push_back(candidates[i]);
      }
      break;  // one descriptor per process says enough
    }
  }
  if (holders.empty()) return fmt::format("its {} end held by none of its parent, children and siblings", end);
  std::string text = fmt::format("its {} end held by {}", end, fmt::join(holders, ", "));
  if (itself && holders.size() == 1 && wanted == O_WRONLY)
    text += ": no end of file can come while this process holds it";
  return text;
}

}  // namespace

// O_ACCMODE of a descriptor, from its fdinfo's "flags:" (octal).
std::optional<int> access_mode(int pid, int fd) {
  auto text = read_proc_file(fmt::format("/proc/{}/fdinfo/{}", pid, fd));
  if (!text) return std::nullopt;
  const size_t at = text->find("flags:");
  if (at == std::string::npos) return std::nullopt;
  unsigned flags = 0;
  std::istringstream(text->substr(at + 6)) >> std::oct >> flags;
  return static_cast<int>(flags & 3u);
}

std::optional<DescribedFileDescriptor> describe_file_descriptor(int pid, int fd) {
  std::array<char, 4096> buffer{};
  const std::string link = fmt::format("/proc/{}/fd/{}", pid, fd);
  const ssize_t length = readlink(link.c_str(), buffer.data(), buffer.size() - 1);
  if (length <= 0) return std::nullopt;
  const std::string target = printable(std::string_view(buffer.data(), static_cast<size_t>(length)));
  if (target.starts_with("pipe:[") && target.ends_with(']')) {
    const std::string raw(buffer.data(), static_cast<size_t>(length));
    std::vector<int> other_pids;
    if (auto partners = pipe_partners(pid, fd, raw, other_pids))
      return DescribedFileDescriptor{target + ", " + *partners, std::move(other_pids)};
    return DescribedFileDescriptor{target, {}};
  }
  constexpr std::string_view kSocket = "socket:[";
  if (!target.starts_with(kSocket) || !target.ends_with(']')) return DescribedFileDescriptor{target, {}};
  auto inode = parse_decimal<uint64_t>(std::string_view(target).substr(kSocket.size(), target.size() - kSocket.size() - 1));
  if (!inode) return DescribedFileDescriptor{target, {}};
  for (std::string_view table : {"tcp", "tcp6", "udp", "udp6"})
    if (auto found = inet_socket(pid, table, *inode)) return DescribedFileDescriptor{*found, {}};
  if (auto found = unix_socket(pid, *inode)) return DescribedFileDescriptor{*found, {}};
  return DescribedFileDescriptor{target, {}};
}

}  // namespace hangpy::targets
