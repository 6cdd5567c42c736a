#include "targets/inet_address.h"

#include <cstdint>
#include <sstream>

#include <fmt/format.h>

namespace hangpy::targets {

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

}  // namespace hangpy::targets
