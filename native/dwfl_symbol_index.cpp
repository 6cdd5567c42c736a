#include "native/dwfl_symbol_index.h"

#include <algorithm>
#include <iterator>

namespace hangpy::native {
namespace {

int binding_rank(const GElf_Sym& symbol) {
  switch (GELF_ST_BIND(symbol.st_info)) {
    case STB_GLOBAL: return 3;
    case STB_WEAK: return 2;
    case STB_LOCAL: return 1;
    default: return 0;
  }
}

// How far back from the pc a lookup looks among symbols that start below it but end before it
// (nested or overlapping symbols) before it hands the pc to libdwfl's own search.
constexpr size_t kMaxBackwardSteps = 64;

std::optional<SymbolAt> libdwfl_lookup(Dwfl_Module* module, uint64_t pc) {
  GElf_Off offset = 0;
  GElf_Sym symbol;
  const char* name = dwfl_module_addrinfo(module, pc, &offset, &symbol, nullptr, nullptr, nullptr);
  if (name == nullptr) return std::nullopt;
  return SymbolAt{name, offset};
}

}  // namespace

DwflSymbolIndex::DwflSymbolIndex(Dwfl_Module* module) : module_(module) {
  const int count = dwfl_module_getsymtab(module);
  const int first_global = dwfl_module_getsymtab_first_global(module);
  for (int i = 1; i < count; ++i) {  // index 0 is the null symbol
    GElf_Sym symbol;
    GElf_Addr address = 0;
    GElf_Word section = 0;
    const char* name =
        dwfl_module_getsym_info(module, i, &symbol, &address, &section, nullptr, nullptr);
    const int type = GELF_ST_TYPE(symbol.st_info);
    // The symbols libdwfl's address search considers, less data objects: a pc is in code, and
    // leaving them out halves the index of an executable such as python's (sizeless ones: see
    // find()).
    if (name == nullptr || name[0] == '\0' || symbol.st_shndx == SHN_UNDEF ||
        type == STT_SECTION || type == STT_FILE || type == STT_TLS || type == STT_OBJECT)
      continue;
    if (symbol.st_size == 0) {
      sizeless_starts_.push_back(address);
      continue;
    }
    // libdwfl searches the globals first, then the locals.
    const size_t order = i >= first_global ? static_cast<size_t>(i - first_global)
                                           : static_cast<size_t>(count + i);
    by_start_.push_back(Entry{address, address + symbol.st_size, binding_rank(symbol), order, name});
  }
  std::sort(by_start_.begin(), by_start_.end(), [](const Entry& a, const Entry& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.binding_rank != b.binding_rank) return a.binding_rank > b.binding_rank;
    return a.order < b.order;
  });
  std::sort(sizeless_starts_.begin(), sizeless_starts_.end());
  max_end_.reserve(by_start_.size());
  for (const Entry& entry : by_start_)
    max_end_.push_back(std::max(entry.end, max_end_.empty() ? 0 : max_end_.back()));
}

std::optional<SymbolAt> DwflSymbolIndex::find(uint64_t pc) const {
  // The entries that start at or below pc end before `above`.
  const auto above = std::upper_bound(
      by_start_.begin(), by_start_.end(), pc,
      [](uint64_t value, const Entry& entry) { return value < entry.start; });
  const size_t below = static_cast<size_t>(above - by_start_.begin());
  const uint64_t reach = below == 0 ? 0 : max_end_[below - 1];  // libdwfl's "min_label"
  if (pc < reach) {
    // Some sized symbol covers pc: the one with the closest start, and at equal starts the first
    // in sorted order (walking back, the last covering one seen at that start).
    const Entry* best = nullptr;
    size_t steps = 0;
    for (auto it = above; it != by_start_.begin(); ) {
      --it;
      if (best != nullptr && it->start != best->start) break;
      if (pc < it->end) best = &*it;
      if (best == nullptr && ++steps > kMaxBackwardSteps) return libdwfl_lookup(module_, pc);
    }
    if (best != nullptr) return SymbolAt{best->name, pc - best->start};
  }
  // No sized symbol covers pc. A sizeless assembly label at or above `reach` may: libdwfl's own
  // search weighs it against the section pc is in; without one, pc has no symbol.
  const auto label = std::upper_bound(sizeless_starts_.begin(), sizeless_starts_.end(), pc);
  if (label == sizeless_starts_.begin() || *std::prev(label) < reach) return std::nullopt;
  return libdwfl_lookup(module_, pc);
}

}  // namespace hangpy::native
