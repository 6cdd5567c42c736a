// A Target that passes everything through and remembers what the analysis used: the bytes it
// read and the symbols it looked up. That is exactly what a self-contained snapshot core needs,
// and all it may hold (read_ranges.h).
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cpython/read_ranges.h"
#include "cpython/target.h"

namespace hangpy::cpython {

class RecordingTarget final : public Target, private AddressSpace {
 public:
  static constexpr uint64_t kPageSize = ReadRanges::kPageSize;

  explicit RecordingTarget(const Target& inner) : inner_(inner) {}

  const AddressSpace& memory() const override { return *this; }
  std::optional<uint64_t> find_symbol(std::string_view name) const override {
    auto address = inner_.find_symbol(name);
    if (address) symbols_[std::string(name)] = *address;
    return address;
  }
  // Sections are kept among the symbols under "section NAME" (no symbol name has a space), which
  // a snapshot answers find_section from.
  std::optional<uint64_t> find_section(std::string_view name) const override {
    auto address = inner_.find_section(name);
    if (address) symbols_[section_key(name)] = *address;
    return address;
  }
  static std::string section_key(std::string_view name) { return "section " + std::string(name); }
  // An aarch64 thread's system call is told by the instruction at or before its pc (core_target's
  // in_syscall): those words are kept too, so that a snapshot tells the same.
  std::vector<NativeThread> threads() const override {
    std::vector<NativeThread> threads = inner_.threads();
    for (const NativeThread& thread : threads) {
      if (thread.machine != Machine::kAarch64 || thread.pc < 4) continue;
      std::array<std::byte, 8> code{};
      if (!read(thread.pc - 4, code)) {
        (void)read(thread.pc - 4, std::span(code).first(4));
        (void)read(thread.pc, std::span(code).first(4));
      }
    }
    return threads;
  }
  std::vector<MappedModule> modules() const override { return inner_.modules(); }
  std::vector<MemoryRange> writable_ranges() const override {
    return inner_.writable_ranges();
  }

  // The bytes successful reads returned, and the pages that hold them.
  const ReadRanges& read_bytes() const { return read_; }
  const std::set<uint64_t>& pages() const { return read_.pages(); }
  // Symbols looked up and found, by name.
  const std::map<std::string, uint64_t>& symbols() const { return symbols_; }
  const AddressSpace& inner_memory() const { return inner_.memory(); }

 private:
  Expected<void> read(uint64_t address, std::span<std::byte> out) const override {
    auto ok = inner_.memory().read(address, out);
    if (ok) read_.add(address, out.size());
    return ok;
  }
  // Only the string and its NUL are kept; the rest of the chunk was never part of the answer.
  Expected<void> read_c_string_chunk(uint64_t address, std::span<std::byte> out) const override {
    auto ok = inner_.memory().read(address, out);
    if (ok) {
      const auto nul = std::find(out.begin(), out.end(), std::byte{0});
      read_.add(address, static_cast<uint64_t>(nul - out.begin()) + (nul != out.end() ? 1 : 0));
    }
    return ok;
  }

  const Target& inner_;
  mutable ReadRanges read_;
  mutable std::map<std::string, uint64_t> symbols_;
};

}  // namespace hangpy::cpython
