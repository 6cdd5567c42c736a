#include "cpython/address_space.h"

#include <algorithm>
#include <array>

namespace hangpy::cpython {

Expected<std::string> read_c_string(const AddressSpace& memory, uint64_t address,
                                    size_t max_length) {
  constexpr uint64_t kPage = 4096;
  std::string text;
  uint64_t cursor = address;
  while (text.size() < max_length) {
    // Never read across a page boundary in one go: the next page may be missing.
    size_t chunk = std::min<uint64_t>(kPage - cursor % kPage, max_length - text.size());
    std::array<std::byte, kPage> buffer;
    auto span = std::span<std::byte>(buffer.data(), chunk);
    if (auto ok = memory.read_c_string_chunk(cursor, span); !ok) return std::unexpected(ok.error());
    for (size_t i = 0; i < chunk; ++i) {
      if (buffer[i] == std::byte{0}) return text;
      text.push_back(static_cast<char>(buffer[i]));
    }
    cursor += chunk;
  }
  return text;  // capped: callers get at most max_length bytes
}

}  // namespace hangpy::cpython
