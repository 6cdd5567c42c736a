#include "targets/initial_environment.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace hangpy::targets {
namespace {

constexpr uint64_t kPage = 4096;
// The kernel allows argument and environment strings up to a quarter of the stack limit
// (fs/exec.c, get_arg_page): 2 MB under the usual 8 MB. Past 8 MB we stop looking.
constexpr uint64_t kMaxSearchBytes = 8 << 20;
constexpr uint64_t kSearchStep = 64 * 1024;
// MAX_ARG_STRLEN (include/uapi/linux/binfmts.h): no string on the initial stack is longer.
constexpr size_t kMaxStringBytes = 32 * kPage;
constexpr size_t kMaxEntries = 1 << 18;
// The auxv entries matched against the stack: four pairs are 64 bytes no other data repeats.
constexpr size_t kPatternPairs = 4;
// Names longer than this are not what a caller keeps; only this much is read before deciding.
constexpr size_t kMaxNameBytes = 64;

// The memory just below the strings' end, read downward in steps until the pattern shows, into
// one buffer of the most the window may hold, filled from its top: reserved, not zeroed, so that
// only the pages read are touched and nothing is moved as the window grows (inserting each step
// in front of the last cost a copy of the whole window per step).
class StackWindow {
 public:
  StackWindow(const cpython::AddressSpace& memory, uint64_t end) : memory_(memory), low_(end), end_(end) {}

  uint64_t low() const { return low_; }
  uint64_t end() const { return end_; }

  // Extends the window down by up to `bytes` (page-aligned); false when nothing more is readable.
  bool grow(uint64_t bytes) {
    if (end_ - low_ >= kMaxSearchBytes || low_ < kPage) return false;
    uint64_t new_low = low_ % kPage ? low_ - low_ % kPage : low_ - std::min(bytes, low_);
    new_low = std::max(new_low, end_ > kMaxSearchBytes ? end_ - kMaxSearchBytes : 0);
    new_low -= new_low % kPage;
    if (!buffer_) buffer_ = std::make_unique_for_overwrite<std::byte[]>(kCapacity);
    // Page by page from the top, so that an unreadable page ends the window below the last good one.
    uint64_t reached = low_;
    while (reached > new_low) {
      const uint64_t page_low = reached % kPage ? reached - reached % kPage : reached - kPage;
      if (!memory_.read(page_low, std::span(slot(page_low), reached - page_low))) break;
      reached = page_low;
    }
    if (reached == low_) return false;
    low_ = reached;
    return true;
  }

  bool contains(uint64_t address, size_t size) const {
    return address >= low_ && address <= end_ && size <= end_ - address;
  }
  const std::byte* at(uint64_t address) const { return slot(address); }
  uint64_t word(uint64_t address) const {
    uint64_t value = 0;
    std::memcpy(&value, at(address), sizeof value);
    return value;
  }

 private:
  // The window reaches at most kMaxSearchBytes below its end, and then down to a page boundary.
  static constexpr size_t kCapacity = kMaxSearchBytes + kPage;
  std::byte* slot(uint64_t address) const { return buffer_.get() + (kCapacity - (end_ - address)); }

  const cpython::AddressSpace& memory_;
  uint64_t low_;
  uint64_t end_;
  std::unique_ptr<std::byte[]> buffer_;  // byte kCapacity - k holds the one k bytes below end_
};

// The highest 8-aligned address in [from, to) where `pattern` starts within the window.
std::optional<uint64_t> find_last(const StackWindow& window, const std::vector<std::byte>& pattern,
                                  uint64_t from, uint64_t to) {
  to = std::min(to, window.end());
  if (to < pattern.size() || to - pattern.size() < from) return std::nullopt;
  uint64_t candidate = to - pattern.size();
  candidate -= candidate % 8;
  for (; candidate >= from && window.contains(candidate, pattern.size()); candidate -= 8) {
    if (std::memcmp(window.at(candidate), pattern.data(), pattern.size()) == 0) return candidate;
    if (candidate < 8) break;
  }
  return std::nullopt;
}

bool is_name_character(char c, bool first) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
}

// Whether `entry` looks like NAME=value (what a program overwrote does not).
bool is_assignment(std::string_view entry) {
  const size_t equals = entry.find('=');
  if (equals == std::string_view::npos || equals == 0) return false;
  for (size_t i = 0; i < equals; ++i)
    if (!is_name_character(entry[i], i == 0)) return false;
  return true;
}

Expected<std::vector<std::string>> strings_in_window(const StackWindow& window,
                                                     const std::vector<uint64_t>& pointers,
                                                     const KeepVariable& keep) {
  std::vector<std::string> kept;
  for (uint64_t pointer : pointers) {
    const size_t room = static_cast<size_t>(std::min<uint64_t>(window.end() - pointer, kMaxStringBytes));
    const char* text = reinterpret_cast<const char*>(window.at(pointer));
    const size_t length = strnlen(text, room);
    const std::string_view entry(text, length);
    if (!is_assignment(entry)) {
      return make_error(ErrorKind::kCorrupt,
                        "the environment strings on the initial stack were overwritten "
                        "(setproctitle reuses them for the process title)",
                        pointer);
    }
    if (keep(entry.substr(0, entry.find('=')))) kept.emplace_back(entry);
  }
  return kept;
}

}  // namespace

// At exec the kernel lays out the top of the stack as (fs/binfmt_elf.c, create_elf_tables, and
// fs/exec.c): argc, argv[] and NULL, envp[] and NULL, the auxv, then (higher) padding, AT_RANDOM's
// bytes, the platform string, the argument strings, the environment strings and last the file
// name AT_EXECFN points to. The stack pointer at exec is in no note, so the auxv is found by its
// contents below AT_EXECFN (NT_AUXV is the kernel's copy of it), and the arrays read down from
// it; argc must equal the number of argv pointers, which checks the whole walk.
namespace {

// Where the kernel put the environment at exec: the window read off the stack and envp[].
struct InitialStack {
  std::unique_ptr<StackWindow> window;
  uint64_t execfn = 0;
  std::vector<uint64_t> environment;  // envp[], in order
};

Expected<InitialStack> locate_initial_stack(const cpython::AddressSpace& memory,
                                            std::span<const std::pair<uint64_t, uint64_t>> auxv) {
  std::optional<uint64_t> execfn;
  for (const auto& [key, value] : auxv)
    if (key == AT_EXECFN) execfn = value;
  if (!execfn || auxv.empty()) return make_error(ErrorKind::kNotFound, "the core records no AT_EXECFN");
  std::vector<std::byte> pattern;
  for (size_t i = 0; i < std::min(auxv.size(), kPatternPairs); ++i) {
    for (uint64_t word : {auxv[i].first, auxv[i].second}) {
      const auto* bytes = reinterpret_cast<const std::byte*>(&word);
      pattern.insert(pattern.end(), bytes, bytes + sizeof word);
    }
  }
  InitialStack stack;
  stack.execfn = *execfn;
  stack.window = std::make_unique<StackWindow>(memory, *execfn);
  StackWindow& window = *stack.window;
  std::optional<uint64_t> auxv_address;
  while (!auxv_address) {
    const uint64_t searched_low = window.low();
    if (!window.grow(kSearchStep)) break;
    auxv_address = find_last(window, pattern, window.low(), searched_low + pattern.size());
  }
  if (!auxv_address) {
    return make_error(ErrorKind::kNotFound,
                      fmt::format("the auxv is not on the stack below AT_EXECFN (0x{:x})", *execfn));
  }
  auto malformed = [](uint64_t address, const char* what) {
    return make_error(ErrorKind::kCorrupt, fmt::format("the initial stack's {} is malformed", what),
                      address);
  };
  // The arrays lie below the auxv, which may start right at the window's low end (the auxv at
  // the top of a page, envp in the page below): the window grows to cover each word read.
  auto covers = [&window](uint64_t address) {
    while (address < window.low()) {
      if (!window.grow(kSearchStep)) return false;
    }
    return true;
  };
  if (!covers(*auxv_address - 16) || window.word(*auxv_address - 8) != 0)
    return malformed(*auxv_address, "environment array");
  // envp[], read downward from its NULL to argv's NULL.
  std::vector<uint64_t>& environment = stack.environment;
  uint64_t cursor = *auxv_address - 16;
  for (;; cursor -= 8) {
    if (!covers(cursor) || environment.size() > kMaxEntries) return malformed(cursor, "environment array");
    const uint64_t pointer = window.word(cursor);
    if (pointer == 0) break;
    if (pointer <= *auxv_address || pointer >= *execfn) return malformed(cursor, "environment array");
    environment.push_back(pointer);
  }
  // argv[], down to argc.
  size_t arguments = 0;
  for (cursor -= 8;; cursor -= 8, ++arguments) {
    if (!covers(cursor) || arguments > kMaxEntries) return malformed(cursor, "argument array");
    const uint64_t word = window.word(cursor);
    if (word == arguments) break;
    if (word <= *auxv_address || word >= *execfn) return malformed(cursor, "argument array");
  }
  std::reverse(environment.begin(), environment.end());
  return stack;
}

}  // namespace

Expected<std::vector<std::string>> read_initial_environment(
    const cpython::AddressSpace& memory, std::span<const std::pair<uint64_t, uint64_t>> auxv,
    const KeepVariable& keep) {
  auto stack = locate_initial_stack(memory, auxv);
  if (!stack) return std::unexpected(stack.error());
  return strings_in_window(*stack->window, stack->environment, keep);
}

std::optional<std::pair<uint64_t, uint64_t>> initial_environment_strings(
    const cpython::AddressSpace& memory, std::span<const std::pair<uint64_t, uint64_t>> auxv) {
  auto stack = locate_initial_stack(memory, auxv);
  if (!stack || stack->environment.empty()) return std::nullopt;
  // The strings lie in envp's order up to the file name AT_EXECFN points to (the kernel copies
  // them there one after another); a program may have moved a pointer, so the lowest one counts.
  const uint64_t low = *std::min_element(stack->environment.begin(), stack->environment.end());
  return std::pair{low, stack->execfn};
}

Expected<std::vector<std::string>> read_environment_array(const cpython::AddressSpace& memory,
                                                          uint64_t environ_variable,
                                                          const KeepVariable& keep) {
  auto array = cpython::read_pointer(memory, environ_variable);
  if (!array) return std::unexpected(array.error());
  if (*array == 0) return make_error(ErrorKind::kNotFound, "libc's environ is NULL");
  std::vector<std::string> kept;
  for (size_t i = 0;; ++i) {
    if (i > kMaxEntries) return make_error(ErrorKind::kCorrupt, "libc's environ has no end", *array);
    auto pointer = cpython::read_pointer(memory, *array + 8 * i);
    if (!pointer) return std::unexpected(pointer.error());
    if (*pointer == 0) break;
    // The name first: the value is read only for the names kept.
    auto head = cpython::read_c_string(memory, *pointer, kMaxNameBytes);
    if (!head) continue;
    const size_t equals = head->find('=');
    if (equals == std::string::npos || !is_assignment(*head) || !keep(std::string_view(*head).substr(0, equals)))
      continue;
    auto entry = cpython::read_c_string(memory, *pointer, kMaxStringBytes);
    if (entry) kept.push_back(std::move(*entry));
  }
  return kept;
}

}  // namespace hangpy::targets
