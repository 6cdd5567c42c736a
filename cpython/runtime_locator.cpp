#include "cpython/runtime_locator.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "cpython/stack_walker.h"
#include "cpython/version_probe.h"

namespace hangpy::cpython {
namespace {

constexpr uint64_t kChunk = 64 * 1024;
constexpr uint64_t kBssSlack = 4 << 20;  // .bss past a module's file mapping is anonymous memory
constexpr size_t kThreadsChecked = 4;
constexpr uint64_t kSearchBudget = 256ull << 20;  // bytes one search may ask for, in all

// `mov disp32(%rip), %rax; ret`: 48 8b 05 <disp32> c3.
std::optional<uint64_t> decode_rip_relative_load(const AddressSpace& memory, uint64_t function) {
  auto code = read_value<std::array<uint8_t, 8>>(memory, function);
  if (!code) return std::nullopt;
  const auto& b = *code;
  if (b[0] != 0x48 || b[1] != 0x8b || b[2] != 0x05 || b[7] != 0xc3) return std::nullopt;
  int32_t displacement = static_cast<int32_t>(b[3] | (b[4] << 8) | (b[5] << 16) |
                                              (static_cast<uint32_t>(b[6]) << 24));
  return function + 7 + static_cast<uint64_t>(static_cast<int64_t>(displacement));
}

bool aligned_pointer(uint64_t value) { return value != 0 && value % 8 == 0; }

// The writable ranges that may hold the interpreter's static data: those inside or just after a
// python/libpython file's mapping; all of them when no such file is mapped (embedded).
std::vector<MemoryRange> ranges_to_search(const Target& target) {
  std::vector<MemoryRange> writable = target.writable_ranges();
  std::vector<MemoryRange> chosen;
  for (const MappedModule& module : target.modules()) {
    if (!version_from_file_name(module.path)) continue;
    for (const MemoryRange& range : writable) {
      if (range.end > module.start && range.start < module.end + kBssSlack)
        chosen.push_back(range);
    }
  }
  return chosen.empty() ? writable : chosen;
}

// Every aligned word of the ranges to search, chunk by chunk, until `accept(address, word)` says
// yes; the address it accepted. Bounded: at most kSearchBudget bytes are asked for in all, since a
// corrupt core can claim a writable range of terabytes, where the interpreter's static data
// takes a few MB; and a range ending near 2^64 cannot wrap the chunk address around.
template <typename Accept>
std::optional<uint64_t> scan_words(const Target& target, Accept accept) {
  std::vector<uint64_t> words(kChunk / 8);
  uint64_t budget = kSearchBudget;
  for (const MemoryRange& range : ranges_to_search(target)) {
    for (uint64_t chunk = range.start; chunk < range.end && budget > 0;) {
      const uint64_t size = std::min({kChunk, range.end - chunk, budget});
      budget -= size;
      auto span = std::as_writable_bytes(std::span(words)).first(size);
      if (target.memory().read(chunk, span)) {  // else not saved in the core: nothing to find
        for (uint64_t i = 0; i < size / 8; ++i) {
          if (accept(chunk + 8 * i, words[i])) return chunk + 8 * i;
        }
      }
      if (range.end - chunk <= size) break;
      chunk += size;
    }
  }
  return std::nullopt;
}

// Whether an address lies in writable memory: where an interpreter state lives (the heap, or
// the runtime's static data). Asked of each candidate word before any read, since most words of
// the data are not such pointers and a failed read costs an error message.
class WritableMemory {
 public:
  explicit WritableMemory(std::vector<MemoryRange> ranges) {
    std::sort(ranges.begin(), ranges.end(),
              [](const MemoryRange& a, const MemoryRange& b) { return a.start < b.start; });
    // Merged where they overlap (a corrupt core's may): one binary search answers.
    for (const MemoryRange& range : ranges) {
      if (range.end <= range.start) continue;
      if (!ranges_.empty() && range.start <= ranges_.back().end)
        ranges_.back().end = std::max(ranges_.back().end, range.end);
      else
        ranges_.push_back(range);
    }
    if (!ranges_.empty()) {
      lowest_ = ranges_.front().start;
      highest_ = ranges_.back().end;
    }
  }

  bool contains(uint64_t address) const {
    if (address < lowest_ || address >= highest_) return false;  // most words that are no pointer
    auto after = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                                  [](uint64_t a, const MemoryRange& r) { return a < r.start; });
    return after != ranges_.begin() && address < std::prev(after)->end;
  }

 private:
  std::vector<MemoryRange> ranges_;  // sorted by start, disjoint
  uint64_t lowest_ = 0;
  uint64_t highest_ = 0;
};

std::optional<uint64_t> search_data(const Target& target, const Layout& layout) {
  const auto head = static_cast<uint64_t>(layout.runtime.interpreters_head);
  const auto threads_head = static_cast<uint64_t>(layout.interpreter.threads_head);
  const WritableMemory writable(target.writable_ranges());
  // The word is the interpreter list's head; the runtime starts `head` bytes before it.
  auto found = scan_words(target, [&](uint64_t address, uint64_t word) {
    if (!aligned_pointer(word) || address < head) return false;
    if (!writable.contains(word) || !writable.contains(word + threads_head)) return false;
    return interpreter_is_plausible(target.memory(), layout, word);
  });
  if (!found) return std::nullopt;
  return *found - head;
}

}  // namespace

std::optional<uint64_t> find_debug_offsets_cookie(const Target& target) {
  static constexpr char kCookie[8] = {'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'};
  uint64_t cookie_word;
  std::memcpy(&cookie_word, kCookie, sizeof(cookie_word));
  return scan_words(target, [&](uint64_t, uint64_t word) { return word == cookie_word; });
}

bool runtime_is_plausible(const AddressSpace& memory, const Layout& layout, uint64_t runtime) {
  auto interpreter =
      read_pointer(memory, runtime + static_cast<uint64_t>(layout.runtime.interpreters_head));
  return interpreter && interpreter_is_plausible(memory, layout, *interpreter);
}

bool interpreter_is_plausible(const AddressSpace& memory, const Layout& layout, uint64_t interpreter) {
  if (!aligned_pointer(interpreter)) return false;
  auto state = read_pointer(memory, interpreter + static_cast<uint64_t>(layout.interpreter.threads_head));
  if (!state || !aligned_pointer(*state)) return false;
  for (size_t i = 0; i < kThreadsChecked && *state != 0; ++i) {
    auto back = read_pointer(memory, *state + static_cast<uint64_t>(layout.thread_state.interp));
    if (!back || *back != interpreter) return false;
    state = read_pointer(memory, *state + static_cast<uint64_t>(layout.thread_state.next));
    if (!state) return false;
  }
  // Back-pointers alone can match by accident (where an interpreter's thread list and a thread's
  // interpreter pointer share an offset, a thread state passes for an interpreter): some thread
  // must also have frames that run code objects. (So a search cannot find an interpreter none
  // of whose threads runs Python code; symbols still can.)
  StackWalker walker(memory, layout);
  auto states = walker.thread_states(interpreter);
  if (!states) return false;
  for (size_t i = 0; i < states->states.size() && i < kThreadsChecked; ++i) {
    PythonThread thread = walker.walk_thread(states->states[i], 0);
    if (thread.error && thread.error->kind != ErrorKind::kNotSaved) return false;
    if (!thread.frames.empty()) return true;
  }
  return false;
}

std::optional<RuntimeLocation> locate_runtime(const Target& target, const Layout& layout) {
  if (auto address = target.find_symbol(layout.runtime.symbol))
    return RuntimeLocation{*address, fmt::format("symbol {}", layout.runtime.symbol)};
  if (!layout.runtime.symbol_reader.empty()) {
    if (auto function = target.find_symbol(layout.runtime.symbol_reader)) {
      if (auto address = decode_rip_relative_load(target.memory(), *function))
        return RuntimeLocation{*address, std::string(layout.runtime.symbol_reader)};
    }
  }
  if (auto address = search_data(target, layout))
    return RuntimeLocation{*address, "search of data"};
  return std::nullopt;
}

}  // namespace hangpy::cpython
