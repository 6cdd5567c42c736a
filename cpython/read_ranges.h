// The byte ranges an analysis read, merged: what a snapshot may keep of the target's memory. A
// snapshot is made of whole pages (a core's segments are page-aligned), and every byte of them
// that no read asked for is written as zero, so that a neighbour of an object the analysis read
// (another object on the heap, the environment, a local the user did not ask for) never leaves
// the machine.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <span>

namespace hangpy::cpython {

class ReadRanges {
 public:
  static constexpr uint64_t kPageSize = 4096;

  // Records [address, address + size); touching or overlapping ranges become one.
  void add(uint64_t address, uint64_t size) {
    if (size == 0) return;
    uint64_t start = address;
    uint64_t end = address + size < address ? UINT64_MAX : address + size;  // saturate at the top
    for (uint64_t page = start & ~(kPageSize - 1); page < end; page += kPageSize) {
      pages_.insert(page);
      if (page > UINT64_MAX - kPageSize) break;
    }
    // The first range that may touch [start, end): the last one starting at or before `start`.
    auto it = ranges_.upper_bound(start);
    if (it != ranges_.begin() && std::prev(it)->second >= start) --it;
    while (it != ranges_.end() && it->first <= end) {
      start = std::min(start, it->first);
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    ranges_.emplace(start, end);
  }

  // Zeroes every byte of `bytes` (the memory at `address`) that no recorded range covers.
  void clear_unread(uint64_t address, std::span<std::byte> bytes) const {
    const uint64_t end = address + bytes.size();
    uint64_t kept_up_to = address;  // bytes before this are covered or already cleared
    auto it = ranges_.upper_bound(address);
    if (it != ranges_.begin()) --it;
    for (; it != ranges_.end() && it->first < end; ++it) {
      if (it->second <= address) continue;
      const uint64_t from = std::max(it->first, address);
      if (from > kept_up_to) zero(bytes, kept_up_to - address, from - address);
      kept_up_to = std::max(kept_up_to, std::min(it->second, end));
    }
    if (kept_up_to < end) zero(bytes, kept_up_to - address, end - address);
  }

  // Start addresses of the pages that hold at least one read byte.
  const std::set<uint64_t>& pages() const { return pages_; }
  // The merged ranges, start -> end (one past the last byte).
  const std::map<uint64_t, uint64_t>& ranges() const { return ranges_; }
  // How many bytes were read, counting each once.
  uint64_t bytes() const {
    uint64_t total = 0;
    for (const auto& [start, end] : ranges_) total += end - start;
    return total;
  }

 private:
  static void zero(std::span<std::byte> bytes, uint64_t from, uint64_t to) {
    std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(from),
              bytes.begin() + static_cast<std::ptrdiff_t>(to), std::byte{0});
  }

  std::map<uint64_t, uint64_t> ranges_;
  std::set<uint64_t> pages_;
};

}  // namespace hangpy::cpython
