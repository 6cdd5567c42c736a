#include "triage/sharing_pool.h"

#include <functional>
#include <string_view>

namespace hangpy::triage {
namespace {

// boost::hash_combine's mixing.
void combine(size_t& hash, size_t value) { hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2); }

size_t hash_of(const FrameLocals::Entries& entries) {
  size_t hash = entries.size();
  for (const auto& [name, repr] : entries) {
    combine(hash, std::hash<std::string_view>{}(name));
    combine(hash, std::hash<std::string_view>{}(repr));
  }
  return hash;
}

size_t hash_of(const FrameList::Frames& frames) {
  size_t hash = frames.size();
  for (const Frame& frame : frames) {
    combine(hash, static_cast<size_t>(frame.kind));
    combine(hash, std::hash<std::string_view>{}(frame.function));
    combine(hash, std::hash<std::string_view>{}(frame.file));
    combine(hash, frame.line ? static_cast<size_t>(*frame.line) + 1 : 0);
    combine(hash, frame.repeated);
  }
  return hash;
}

// The copy held for `value`'s content, added when it is the first.
template <typename Map, typename Value>
typename Map::mapped_type shared_copy(Map& map, std::mutex& mutex, Value&& value) {
  const size_t hash = hash_of(value);
  std::lock_guard<std::mutex> lock(mutex);
  auto [first, last] = map.equal_range(hash);
  for (auto it = first; it != last; ++it)
    if (*it->second == value) return it->second;
  using Held = typename Map::mapped_type::element_type;
  auto shared = std::make_shared<Held>(std::move(value));
  map.emplace(hash, shared);
  return shared;
}

}  // namespace

FrameLocals SharingPool::intern(FrameLocals::Entries&& entries) {
  if (entries.empty()) return FrameLocals();
  return FrameLocals(shared_copy(locals_, mutex_, std::move(entries)));
}

FrameList SharingPool::intern(FrameList::Frames&& frames) {
  if (frames.empty()) return FrameList();
  return FrameList(shared_copy(stacks_, mutex_, std::move(frames)));
}

size_t SharingPool::distinct_locals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return locals_.size();
}

size_t SharingPool::distinct_stacks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stacks_.size();
}

}  // namespace hangpy::triage
