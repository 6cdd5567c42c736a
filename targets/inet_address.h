// The addresses of /proc/PID/net/{tcp,tcp6,udp,udp6}'s address fields, in words
// ("127.0.0.1:8000", "[0:0:0:0:0:0:0:1]:8000"); shared by what a descriptor is
// (file_descriptors.h) and the connected sockets a process holds (socket_ends.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hangpy::targets {

std::optional<std::string> ipv4_address(std::string_view field);
std::optional<std::string> ipv6_address(std::string_view field);

}  // namespace hangpy::targets
