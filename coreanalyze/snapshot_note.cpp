#include "coreanalyze/snapshot_note.h"

#include <cstring>

namespace hangpy::coreanalyze {

std::vector<std::byte> encode_snapshot_symbols(const std::map<std::string, uint64_t>& symbols) {
  std::vector<std::byte> out;
  for (const auto& [name, address] : symbols) {
    size_t at = out.size();
    out.resize(at + sizeof(address) + name.size() + 1);
    std::memcpy(out.data() + at, &address, sizeof(address));
    std::memcpy(out.data() + at + sizeof(address), name.c_str(), name.size() + 1);
  }
  return out;
}

std::optional<std::map<std::string, uint64_t>> decode_snapshot_symbols(
    std::span<const std::byte> desc) {
  std::map<std::string, uint64_t> symbols;
  size_t at = 0;
  while (at < desc.size()) {
    uint64_t address = 0;
    if (desc.size() - at < sizeof(address)) return std::nullopt;
    std::memcpy(&address, desc.data() + at, sizeof(address));
    at += sizeof(address);
    const char* name = reinterpret_cast<const char*>(desc.data() + at);
    size_t length = strnlen(name, desc.size() - at);
    if (length == desc.size() - at) return std::nullopt;  // no terminating NUL
    symbols.emplace(std::string(name, length), address);
    at += length + 1;
  }
  return symbols;
}

}  // namespace hangpy::coreanalyze
