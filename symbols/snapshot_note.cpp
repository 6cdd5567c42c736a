#include "symbols/snapshot_note.h"

#include <cstring>

#include <fmt/format.h>

namespace hangpy::symbols {

std::vector<std::byte> encode_snapshot_symbols(const SnapshotSymbols& symbols) {
  std::vector<std::byte> out;
  for (const auto& [name, address] : symbols) {
    size_t at = out.size();
    out.resize(at + sizeof(address) + name.size() + 1);
    std::memcpy(out.data() + at, &address, sizeof(address));
    std::memcpy(out.data() + at + sizeof(address), name.c_str(), name.size() + 1);
  }
  return out;
}

std::optional<SnapshotSymbols> decode_snapshot_symbols(std::span<const std::byte> desc) {
  SnapshotSymbols symbols;
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

bool is_snapshot_symbols_note(const ElfNote& note) {
  return note.name == kSnapshotNoteName && note.type == kSnapshotSymbolsNoteType;
}

Expected<std::optional<SnapshotSymbols>> read_snapshot_symbols(const std::string& path) {
  auto file = ElfFile::open(path);
  if (!file) return std::unexpected(file.error());
  auto notes = (*file)->notes();
  if (!notes) return std::unexpected(notes.error());
  for (const ElfNote& note : *notes) {
    if (!is_snapshot_symbols_note(note)) continue;
    auto symbols = decode_snapshot_symbols(note.desc);
    if (!symbols) {
      return make_error(ErrorKind::kCorrupt,
                        fmt::format("the snapshot symbol note of {} is corrupt", path));
    }
    return std::optional<SnapshotSymbols>(std::move(*symbols));
  }
  return std::optional<SnapshotSymbols>();
}

}  // namespace hangpy::symbols
