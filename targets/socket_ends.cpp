#include "targets/socket_ends.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "base/parse_number.h"
#include "targets/inet_address.h"
#include "targets/proc_file.h"

namespace hangpy::targets {
namespace {

// "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535" is 47 characters.
constexpr size_t kMaxAddressLength = 64;

std::optional<uint64_t> socket_inode(int pid, std::string_view fd) {
  std::array<char, 64> buffer{};
  const std::string path = fmt::format("/proc/{}/fd/{}", pid, fd);
  const ssize_t length = readlink(path.c_str(), buffer.data(), buffer.size() - 1);
  if (length <= 0) return std::nullopt;
  const std::string_view link(buffer.data(), static_cast<size_t>(length));
  constexpr std::string_view kSocket = "socket:[";
  if (!link.starts_with(kSocket) || !link.ends_with(']')) return std::nullopt;
  return parse_decimal<uint64_t>(link.substr(kSocket.size(), link.size() - kSocket.size() - 1));
}

// inode -> (local, remote) of the connected sockets (state other than LISTEN) in one table.
void read_tcp_table(int pid, std::string_view table, std::map<uint64_t, std::pair<std::string, std::string>>& into) {
  auto text = read_proc_file(fmt::format("/proc/{}/net/{}", pid, table));
  if (!text) return;
  const bool v6 = table.ends_with('6');
  std::istringstream lines(*text);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode_text;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode_text))
      continue;
    if (state == "0A") continue;  // listening
    const std::optional<uint64_t> inode = parse_decimal<uint64_t>(inode_text);
    auto local_address = v6 ? ipv6_address(local) : ipv4_address(local);
    auto remote_address = v6 ? ipv6_address(remote) : ipv4_address(remote);
    if (!inode || *inode == 0 || !local_address || !remote_address) continue;
    into.emplace(*inode, std::make_pair(*local_address, *remote_address));
  }
}

}  // namespace

std::vector<cpython::SocketEnd> live_socket_ends(int pid) {
  std::vector<cpython::SocketEnd> ends;
  std::vector<std::pair<int64_t, uint64_t>> sockets;  // (fd, inode)
  DIR* fds = opendir(fmt::format("/proc/{}/fd", pid).c_str());
  if (fds == nullptr) return ends;
  size_t looked = 0;
  while (dirent* entry = readdir(fds)) {
    if (entry->d_name[0] == '.') continue;
    if (++looked > kMaxDescriptorsLooked) break;
    const std::optional<int64_t> fd = parse_decimal<int64_t>(entry->d_name);
    if (!fd) continue;
    if (const std::optional<uint64_t> inode = socket_inode(pid, entry->d_name)) sockets.emplace_back(*fd, *inode);
  }
  closedir(fds);
  if (sockets.empty()) return ends;  // the tables are read only for a process with sockets
  std::map<uint64_t, std::pair<std::string, std::string>> connected;
  read_tcp_table(pid, "tcp", connected);
  read_tcp_table(pid, "tcp6", connected);
  std::sort(sockets.begin(), sockets.end());
  for (const auto& [fd, inode] : sockets) {
    if (ends.size() >= kMaxSocketEnds) break;
    auto found = connected.find(inode);
    if (found != connected.end()) ends.push_back({fd, found->second.first, found->second.second});
  }
  return ends;
}

std::vector<std::byte> encode_socket_ends(const std::vector<cpython::SocketEnd>& ends) {
  std::string text;
  for (const cpython::SocketEnd& end : ends) text += fmt::format("{} {} {}\n", end.fd, end.local, end.remote);
  const auto bytes = std::as_bytes(std::span(text.data(), text.size()));
  return {bytes.begin(), bytes.end()};
}

std::vector<cpython::SocketEnd> decode_socket_ends(std::span<const std::byte> desc) {
  std::vector<cpython::SocketEnd> ends;
  std::istringstream lines(std::string(reinterpret_cast<const char*>(desc.data()), desc.size()));
  std::string line;
  while (std::getline(lines, line) && ends.size() < kMaxSocketEnds) {
    std::istringstream fields(line);
    std::string fd_text, local, remote, extra;
    if (!(fields >> fd_text >> local >> remote) || (fields >> extra)) continue;
    const std::optional<int64_t> fd = parse_decimal<int64_t>(fd_text);
    if (!fd || *fd < 0 || *fd > INT32_MAX || local.size() > kMaxAddressLength || remote.size() > kMaxAddressLength) continue;
    // An address is digits, dots, colons, brackets and hex letters: nothing to escape later.
    auto plain = [](const std::string& text) {
      return std::all_of(text.begin(), text.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c)) || c == '.' || c == ':' || c == '[' || c == ']';
      });
    };
    if (!plain(local) || !plain(remote)) continue;
    ends.push_back({*fd, local, remote});
  }
  return ends;
}

}  // namespace hangpy::targets
