#include "targets/file_pages.h"

#include <algorithm>
#include <cstring>

namespace hangpy::targets {

FilePages::FilePages(const symbols::ElfFile& file, uint64_t mapped_up_to)
    : file_(file), mapped_up_to_(mapped_up_to) {}

std::span<const std::byte> FilePages::page(uint64_t index) const {
  // Consecutive pages fall in consecutive sets; within a set the least recently used slot goes.
  const size_t set = static_cast<size_t>(index % kSets) * kWays;
  Slot* victim = &slots_[set];
  for (size_t way = 0; way < kWays; ++way) {
    Slot& slot = slots_[set + way];
    if (slot.page == index) {
      slot.last_use = ++uses_;
      return {buffers_.get() + (set + way) * kPageSize, slot.size};
    }
    if (slot.last_use < victim->last_use) victim = &slot;
  }
  // Default-initialised: a buffer's page is touched when first used, not before.
  if (!buffers_) buffers_.reset(new std::byte[kSlots * kPageSize]);
  const size_t slot_index = static_cast<size_t>(victim - slots_.data());
  const uint64_t start = index * kPageSize;
  const auto size = static_cast<uint32_t>(std::min<uint64_t>(kPageSize, file_.file_size() - start));
  std::span<std::byte> bytes(buffers_.get() + slot_index * kPageSize, size);
  victim->page = UINT64_MAX;
  if (!file_.read_file_offset_unmapped(start, bytes)) return {};
  victim->page = index;
  victim->size = size;
  victim->last_use = ++uses_;
  return bytes;
}

FilePages::MappedImage FilePages::mapped_image() const {
  if (file_.file_size() > mapped_up_to_) return {};
  return {file_.mapped_bytes(), file_.patched_header_bytes()};
}

Expected<void> FilePages::read(uint64_t offset, std::span<std::byte> out) const {
  const uint64_t size = file_.file_size();
  if (size <= mapped_up_to_) return file_.read_file_offset(offset, out);
  if (out.size() >= kDirectReadBytes || offset > size || size - offset < out.size())
    return file_.read_file_offset_unmapped(offset, out);  // its own error past the end
  std::lock_guard<std::mutex> lock(mutex_);
  size_t done = 0;
  while (done < out.size()) {
    const uint64_t at = offset + done;
    const std::span<const std::byte> kept = page(at / kPageSize);
    if (kept.empty()) return file_.read_file_offset_unmapped(at, out.subspan(done));
    const size_t within = static_cast<size_t>(at % kPageSize);
    const size_t count = std::min(out.size() - done, kept.size() - within);
    std::memcpy(out.data() + done, kept.data() + within, count);
    done += count;
  }
  return {};
}

}  // namespace hangpy::targets
