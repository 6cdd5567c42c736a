#include "targets/file_descriptors.h"

#include <unistd.h>

#include <array>
#include <cstdint>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/parse_number.h"
#include "base/printable.h"
#include "targets/proc_file.h"

namespace hangpy::coreanalyze {
namespace {

// /proc/net/tcp's address field: the IPv4 address as one 32-bit hex word in host order (the
// network bytes read as a little-endian word), the port in hex.
std::optional<std::string> ipv4_address(std::string_view field) {
  const size_t colon = field.find(':');
  if (colon != 8) return std::nullopt;
  uint32_t address = 0;
  uint32_t port = 0;
  std::istringstream(std::string(field.substr(0, 8))) >> std::hex >> address;
  std::istringstream(std::string(field.substr(colon + 1))) >> std::hex >> port;
  return fmt::format("{}.{}.{}.{}:{}", address & 0xff, (address >> 8) & 0xff, (address >> 16) & 0xff,
                     address >> 24, port);
}

// The same for IPv6: four 32-bit words, each in host order; shown in full, colon-separated.
std::optional<std::string> ipv6_address(std::string_view field) {
  const size_t colon = field.find(':');
  if (colon != 32) return std::nullopt;
  std::string text = "[";
  for (int word = 0; word < 4; ++word) {
    uint32_t value = 0;
    std::istringstream(std::string(field.substr(static_cast<size_t>(word) * 8, 8))) >> std::hex >> value;
    for (int half = 0; half < 2; ++half) {
      const uint32_t part = half == 0 ? value & 0xffff : value >> 16;
      const uint32_t swapped = ((part & 0xff) << 8) | (part >> 8);
      text += fmt::format("{}{:x}", word == 0 && half == 0 ? "" : ":", swapped);
    }
  }
  uint32_t port = 0;
  std::istringstream(std::string(field.substr(colon + 1))) >> std::hex >> port;
  return text + fmt::format("]:{}", port);
}

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

}  // namespace

std::optional<std::string> describe_file_descriptor(int pid, int fd) {
  std::array<char, 4096> buffer{};
  const std::string link = fmt::format("/proc/{}/fd/{}", pid, fd);
  const ssize_t length = readlink(link.c_str(), buffer.data(), buffer.size() - 1);
  if (length <= 0) return std::nullopt;
  const std::string target = printable(std::string_view(buffer.data(), static_cast<size_t>(length)));
  constexpr std::string_view kSocket = "socket:[";
  if (!target.starts_with(kSocket) || !target.ends_with(']')) return target;
  auto inode = parse_decimal<uint64_t>(std::string_view(target).substr(kSocket.size(), target.size() - kSocket.size() - 1));
  if (!inode) return target;
  for (std::string_view table : {"tcp", "tcp6", "udp", "udp6"})
    if (auto found = inet_socket(pid, table, *inode)) return found;
  if (auto found = unix_socket(pid, *inode)) return found;
  return target;
}

}  // namespace hangpy::coreanalyze
