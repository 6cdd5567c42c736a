#include "targets/thread_pointers.h"

#include <array>
#include <cstring>
#include <optional>
#include <unordered_set>

#include "cpython/address_space.h"

namespace hangpy::targets {
namespace {

constexpr uint64_t kMaxTidOffset = 4096;  // struct pthread is about 2 KB in every glibc
constexpr uint64_t kSelfOffset = 16;      // x86-64 tcbhead_t: tcb, dtv, self

bool looks_like_thread_pointer(const cpython::AddressSpace& memory, uint64_t pointer) {
  return pointer != 0 && cpython::read_value<uint64_t>(memory, pointer + kSelfOffset) == pointer;
}

std::optional<uint64_t> tid_offset_from_descriptor(const cpython::Target& target) {
  auto descriptor = target.find_symbol("_thread_db_pthread_tid");
  if (!descriptor) return std::nullopt;
  auto fields = cpython::read_value<std::array<uint32_t, 3>>(target.memory(), *descriptor);
  if (!fields || (*fields)[0] != 32 || (*fields)[1] != 1 || (*fields)[2] >= kMaxTidOffset)
    return std::nullopt;
  return (*fields)[2];
}

// The first offset where a thread with a known thread pointer keeps its LWP.
std::optional<uint64_t> tid_offset_from_known_thread(const cpython::AddressSpace& memory,
                                                     const std::vector<cpython::NativeThread>& threads) {
  for (const cpython::NativeThread& thread : threads) {
    if (thread.fs_base == 0 || !looks_like_thread_pointer(memory, thread.fs_base)) continue;
    std::array<std::byte, kMaxTidOffset> block{};
    if (!memory.read(thread.fs_base, block)) continue;
    for (uint64_t offset = kSelfOffset + 8; offset + 4 <= block.size(); offset += 4) {
      int32_t value = 0;
      std::memcpy(&value, block.data() + offset, sizeof value);
      if (value == thread.lwp) return offset;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> pthread_tid_offset(const cpython::Target& target, std::span<const KnownThread> known) {
  std::vector<cpython::NativeThread> threads;
  for (const KnownThread& thread : known) {
    cpython::NativeThread native;
    native.lwp = thread.lwp;
    native.fs_base = thread.pointer;
    threads.push_back(native);
  }
  if (auto offset = tid_offset_from_known_thread(target.memory(), threads)) return offset;
  return tid_offset_from_descriptor(target);
}

std::map<int64_t, uint64_t> thread_pointers_by_lwp(const cpython::Target& target,
                                                   std::span<const uint64_t> candidates,
                                                   std::optional<uint64_t> descriptor_offset) {
  std::map<int64_t, uint64_t> by_lwp;
  if (!descriptor_offset) return by_lwp;
  const cpython::AddressSpace& memory = target.memory();
  for (uint64_t candidate : candidates) {
    auto lwp = cpython::read_value<int32_t>(memory, candidate + *descriptor_offset);
    if (lwp && *lwp > 0 && looks_like_thread_pointer(memory, candidate)) by_lwp.emplace(*lwp, candidate);
  }
  return by_lwp;
}

void fill_thread_pointers(const cpython::Target& target, std::span<const uint64_t> candidates,
                          std::vector<cpython::NativeThread>& threads, std::optional<uint64_t> descriptor_offset,
                          const std::map<int64_t, uint64_t>& known) {
  bool some_missing = false;
  for (cpython::NativeThread& thread : threads) {
    if (thread.fs_base != 0) continue;
    if (auto found = known.find(thread.lwp); found != known.end()) thread.fs_base = found->second;
    else some_missing = true;
  }
  if (!some_missing || candidates.empty()) return;
  const cpython::AddressSpace& memory = target.memory();
  std::optional<uint64_t> offset = descriptor_offset;
  if (!offset) offset = tid_offset_from_known_thread(memory, threads);
  if (!offset) return;
  // A candidate `known` gave to a thread still here is that thread's: no other can be found in it.
  // Skipping those keeps a torch rank's OpenMP workers (no thread state of theirs among the
  // candidates) from reading all 140 candidates' pages while the process is held.
  std::unordered_set<int64_t> present;
  for (const cpython::NativeThread& thread : threads) present.insert(thread.lwp);
  std::unordered_set<uint64_t> settled;
  for (const auto& [lwp, pointer] : known)
    if (present.contains(lwp)) settled.insert(pointer);
  for (cpython::NativeThread& thread : threads) {
    if (thread.fs_base != 0) continue;
    for (uint64_t candidate : candidates) {
      if (settled.contains(candidate)) continue;
      if (cpython::read_value<int32_t>(memory, candidate + *offset) == thread.lwp &&
          looks_like_thread_pointer(memory, candidate)) {
        thread.fs_base = candidate;
        break;
      }
    }
  }
}

}  // namespace hangpy::targets
