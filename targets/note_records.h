// Snapshot notes made of fixed-size records of 8-byte words (little-endian, as both machines
// hangpy reads are): the pipe ends' note and the namespace PIDs' note. A note is the target's to
// forge; a record cut short is dropped, and the caller checks each record's values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace hangpy::targets {

template <size_t Words>
void append_note_record(std::vector<std::byte>& out, const std::array<uint64_t, Words>& words) {
  const size_t at = out.size();
  out.resize(at + sizeof words);
  std::memcpy(out.data() + at, words.data(), sizeof words);
}

// The whole records of `desc`, at most `most` of them.
template <size_t Words>
std::vector<std::array<uint64_t, Words>> note_records(std::span<const std::byte> desc, size_t most) {
  std::vector<std::array<uint64_t, Words>> records;
  constexpr size_t kRecordBytes = Words * sizeof(uint64_t);
  for (size_t at = 0; at + kRecordBytes <= desc.size() && records.size() < most; at += kRecordBytes) {
    std::array<uint64_t, Words> words{};
    std::memcpy(words.data(), desc.data() + at, kRecordBytes);
    records.push_back(words);
  }
  return records;
}

}  // namespace hangpy::targets
