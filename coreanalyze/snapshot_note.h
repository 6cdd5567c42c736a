// The note that makes a snapshot core self-contained: the symbol addresses the analysis needed,
// so that reading the snapshot needs none of the original binaries.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace hangpy::coreanalyze {

inline constexpr const char* kSnapshotNoteName = "HANGPY";
inline constexpr uint32_t kSnapshotSymbolsNoteType = 0x48505901;

// Encoding: for each symbol, its 8-byte little-endian address, then its NUL-terminated name.
std::vector<std::byte> encode_snapshot_symbols(const std::map<std::string, uint64_t>& symbols);
std::optional<std::map<std::string, uint64_t>> decode_snapshot_symbols(
    std::span<const std::byte> desc);

}  // namespace hangpy::coreanalyze
