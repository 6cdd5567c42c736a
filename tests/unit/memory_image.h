// An in-memory AddressSpace for walker robustness tests: corrupt chains, cycles, holes. It is
// never a stand-in for a real interpreter's memory; truth comes from real processes and cores.
#pragma once

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cpython/address_space.h"

namespace hangpy::test_support {

class MemoryImage : public cpython::AddressSpace {
 public:
  Expected<void> read(uint64_t address, std::span<std::byte> out) const override {
    auto it = regions_.upper_bound(address);
    if (it == regions_.begin()) return make_error(ErrorKind::kUnmapped, "unmapped", address);
    --it;
    uint64_t offset = address - it->first;
    if (offset + out.size() > it->second.size())
      return make_error(ErrorKind::kUnmapped, "unmapped", address);
    std::memcpy(out.data(), it->second.data() + offset, out.size());
    return {};
  }
  // Maps `size` zero bytes at `address` (regions must not overlap).
  void map(uint64_t address, size_t size) { regions_[address].assign(size, std::byte{0}); }
  template <typename T>
  void put(uint64_t address, T value) {
    auto it = --regions_.upper_bound(address);
    std::memcpy(it->second.data() + (address - it->first), &value, sizeof(T));
  }
  void put_string(uint64_t address, const std::string& text) {
    auto it = --regions_.upper_bound(address);
    std::memcpy(it->second.data() + (address - it->first), text.c_str(), text.size() + 1);
  }

 private:
  std::map<uint64_t, std::vector<std::byte>> regions_;
};

}  // namespace hangpy::test_support
