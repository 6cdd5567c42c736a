#include "native/dwfl_symbol_index.h"

#include "native/raw_symbol_table.h"

#include <algorithm>
#include <iterator>

namespace hangpy::native {
namespace {

int binding_rank(unsigned binding) {
  switch (binding) {
    case STB_GLOBAL: return 3;
    case STB_WEAK: return 2;
    case STB_LOCAL: return 1;
    default: return 0;
  }
}

// The symbol types the address search skips, as libdwfl's own does, less data objects: a pc is
// in code, and leaving them out halves the index of an executable such as python's. A bit per
// type (STT_* < 16).
constexpr uint32_t kSkippedTypes = (1u << STT_SECTION) | (1u << STT_FILE) | (1u << STT_TLS) | (1u << STT_OBJECT);

inline bool skipped(unsigned type, uint32_t name_offset, uint32_t section) {
  return name_offset == 0 || section == SHN_UNDEF || ((kSkippedTypes >> (type & 15)) & 1) != 0;
}

// Whether the raw table's entry is one the search skips: skipped() or, for a symbol of an
// unallocated section, one with no address in the process (libdwfl leaves its value unbiased, far
// below any loaded module): it never covers a pc.
inline bool raw_entry_skipped(const RawSymbolTable& table, const Elf64_Sym& entry) {
  return skipped(ELF64_ST_TYPE(entry.st_info), entry.st_name, entry.st_shndx) ||
         (entry.st_shndx < SHN_LORESERVE && !table.allocated_section(entry.st_shndx));
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

// One symbol of the module's table as the address search sees it; nullopt for those it skips.
struct CodeSymbol {
  uint64_t start = 0;
  uint64_t size = 0;  // 0: a sizeless label
  int binding_rank = 0;
  size_t order = 0;
  const char* name = nullptr;  // nullptr until read (SymbolSource::name)
  int index = 0;
};

// Whether `a` is preferred to `b` among the symbols covering a pc: the closest start, then at
// equal starts a global over a weak over a local, then libdwfl's search order.
static bool preferred(const CodeSymbol& a, const CodeSymbol& b) {
  if (a.start != b.start) return a.start > b.start;
  if (a.binding_rank != b.binding_rank) return a.binding_rank > b.binding_rank;
  return a.order < b.order;
}

// The module's symbols as the address search reads them: from the raw table where it is
// libdwfl's own (native/raw_symbol_table.h), else through libdwfl one call per symbol.
class SymbolSource {
 public:
  explicit SymbolSource(Dwfl_Module* module)
      : module_(module),
        raw_(RawSymbolTable::of(module)),
        count_(dwfl_module_getsymtab(module)),
        first_global_(dwfl_module_getsymtab_first_global(module)) {}

  int count() const { return count_; }

  // Symbol i as a candidate for a pc; nullopt for those the search skips: the symbols libdwfl's
  // address search considers, less data objects: a pc is in code, and leaving them out halves
  // the index of an executable such as python's (sizeless ones: see find()). A nameless symbol
  // is told by st_name 0, not by reading its name: that read lands at random in the string table
  // (2.7 MB in libtorch_cpu's .dynstr) and cost 70% of building the index; the name is read only
  // for the symbols that cover a pc (CodeSymbol::name).
  std::optional<CodeSymbol> symbol(int i) const {
    return raw_ ? raw_symbol(i) : libdwfl_symbol(i);
  }

  // Whether symbol i surely starts above `address` (read from the raw table alone; false where
  // only libdwfl can tell): such a symbol covers no pc at or below it, and the search skips it
  // before reading the rest of its entry.
  bool starts_above(int i, uint64_t address) const { return raw_ && raw_->address(i) > address; }

  // The raw table, where symbol() reads it (nullptr where it asks libdwfl).
  const RawSymbolTable* raw() const { return raw_ ? &*raw_ : nullptr; }

  const char* name(const CodeSymbol& symbol) const {
    if (symbol.name != nullptr) return symbol.name;
    const char* name = raw_->name(symbol.index);
    return name != nullptr ? name : "";
  }

 private:
  // libdwfl searches the globals first, then the locals.
  size_t order(int i) const {
    return i >= first_global_ ? static_cast<size_t>(i - first_global_) : static_cast<size_t>(count_ + i);
  }

  std::optional<CodeSymbol> raw_symbol(int i) const {
    const Elf64_Sym& entry = raw_->entry(i);
    if (raw_entry_skipped(*raw_, entry)) return std::nullopt;
    return CodeSymbol{raw_->address(i), entry.st_size, binding_rank(ELF64_ST_BIND(entry.st_info)), order(i), nullptr, i};
  }

  std::optional<CodeSymbol> libdwfl_symbol(int i) const {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    GElf_Word section = 0;
    const char* name = dwfl_module_getsym_info(module_, i, &symbol, &address, &section, nullptr, nullptr);
    if (name == nullptr || skipped(GELF_ST_TYPE(symbol.st_info), symbol.st_name, symbol.st_shndx))
      return std::nullopt;
    return CodeSymbol{address, symbol.st_size, binding_rank(GELF_ST_BIND(symbol.st_info)), order(i), name, i};
  }

  Dwfl_Module* module_;
  std::optional<RawSymbolTable> raw_;
  int count_;
  int first_global_;
};


DwflSymbolIndex::DwflSymbolIndex(Dwfl_Module* module)
    : module_(module), source_(std::make_unique<SymbolSource>(module)) {
  for (int i = 1; i < source_->count(); ++i) {  // index 0 is the null symbol
    const std::optional<CodeSymbol> symbol = source_->symbol(i);
    if (!symbol) continue;
    if (symbol->size == 0) {
      sizeless_starts_.push_back(symbol->start);
      continue;
    }
    by_start_.push_back(Entry{symbol->start, symbol->start + symbol->size, symbol->binding_rank, symbol->order,
                              symbol->name, symbol->index});
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

DwflSymbolIndex::~DwflSymbolIndex() = default;

const char* DwflSymbolIndex::name_of(const Entry& entry) const {
  if (entry.name != nullptr) return entry.name;
  return source_->name(CodeSymbol{entry.start, entry.end - entry.start, entry.binding_rank, entry.order, nullptr, entry.index});
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
      if (pc < it->end && name_of(*it)[0] != '\0') best = &*it;
      if (best == nullptr && ++steps > kMaxBackwardSteps) return libdwfl_lookup(module_, pc);
    }
    if (best != nullptr) return SymbolAt{name_of(*best), pc - best->start};
  }
  // No sized symbol covers pc. A sizeless assembly label at or above `reach` may: libdwfl's own
  // search weighs it against the section pc is in; without one, pc has no symbol.
  const auto label = std::upper_bound(sizeless_starts_.begin(), sizeless_starts_.end(), pc);
  if (label == sizeless_starts_.begin() || *std::prev(label) < reach) return std::nullopt;
  return libdwfl_lookup(module_, pc);
}

}  // namespace hangpy::native

namespace hangpy::native {
namespace {

// Where a symbol may cover one of a few pcs, told from its start and end alone: the span from the
// lowest pc's bucket to the highest cut into at most kBuckets buckets of 2^shift bytes (at least
// 4 KB), each holding the first pc at or above its start. A symbol starting in a bucket covers no
// pc when it ends at or before that pc (the first pc at or above the symbol's start is no lower).
//
// Why: most of a big module's symbols cover no pc, and telling so from their addresses by
// comparisons (below the lowest pc, above the highest, between two) branches on data the
// processor cannot predict in a table ordered by file and name: a third of the pass went in
// mispredicted branches. Here each symbol costs a subtraction, a shift, a clamp and one load, and
// the branch on the answer is almost never taken. (A first filter of one byte a bucket, marked
// where a pc lay in it or the next, let every symbol of 4 KB or more through: 7% slower.)
class CoverFilter {
 public:
  explicit CoverFilter(const std::vector<uint64_t>& pcs) {
    const uint64_t lowest = pcs.front();
    const uint64_t highest = pcs.back();
    while (shift_ < 62 && ((highest - lowest) >> shift_) >= kBuckets - 2) ++shift_;
    floor_ = lowest & ~((uint64_t{1} << shift_) - 1);
    buckets_ = static_cast<size_t>((highest - floor_) >> shift_) + 1;
    // next_pc_[b + 1]: the first pc at or above bucket b's start; [0]: below the floor; the last:
    // above the span.
    next_pc_.resize(buckets_ + 2);
    next_pc_[0] = lowest;
    size_t next = 0;
    for (size_t b = 0; b < buckets_; ++b) {
      const uint64_t bucket_start = floor_ + (uint64_t{b} << shift_);
      while (pcs[next] < bucket_start) ++next;  // the last bucket holds the highest pc
      next_pc_[b + 1] = pcs[next];
    }
    next_pc_[buckets_ + 1] = UINT64_MAX;
  }

  // False where a symbol [start, end) covers none of the pcs for sure (an end that wrapped
  // around included: it covers nothing).
  bool may_cover(uint64_t start, uint64_t end) const {
    // The offset taken as signed, so that a start below the floor clamps to the first entry (the
    // lowest pc: no pc lies lower, whatever the start) and one past the span to the last (none).
    // In arithmetic, not comparisons, which gcc turns into branches on the address: a negative
    // bucket ORed with its sign is -1.
    int64_t bucket = static_cast<int64_t>(start - floor_) >> shift_;
    bucket |= bucket >> 63;
    const size_t at = static_cast<size_t>(std::min<int64_t>(bucket, static_cast<int64_t>(buckets_)) + 1);
    return end > next_pc_[at];
  }

 private:
  static constexpr uint64_t kBuckets = 2048;
  int shift_ = 12;
  uint64_t floor_ = 0;
  size_t buckets_ = 0;
  std::vector<uint64_t> next_pc_;
};

// find_in_one_pass over a raw table (RawSymbolTable): the same answers (see weigh() there), each
// symbol first asked of a CoverFilter, and only the few it lets through searched among the pcs;
// their type and section are read only where they cover a pc or are sizeless. A pc no sized
// symbol covers is decided after the pass: without a sizeless label at or below it, it has no
// symbol; with one, libdwfl's own search is asked when no sized symbol starting at or below the pc
// ends above the label (libdwfl's "min_label"), which a second pass finds out, ending at the
// first such symbol (almost always among the first few: the label is far below).
std::vector<std::optional<SymbolAt>> raw_table_pass(Dwfl_Module* module, const SymbolSource& source,
                                                    const RawSymbolTable& raw, const std::vector<uint64_t>& pcs) {
  const size_t n = pcs.size();
  const CoverFilter filter(pcs);
  std::vector<std::optional<CodeSymbol>> best(n);
  std::vector<uint64_t> labels;  // the starts of the sizeless symbols not above the highest pc
  const uint64_t highest = pcs.back();
  const Elf64_Sym* entries = raw.entries();
  const uint64_t bias = raw.bias();
  const int count = source.count();
  for (int i = 1; i < count; ++i) {
    const Elf64_Sym& entry = entries[i];
    const uint64_t start = entry.st_value + bias;  // RawSymbolTable::address
    const uint64_t end = start + entry.st_size;
    if (__builtin_expect(filter.may_cover(start, end), 0)) {
      if (entry.st_size == 0) {  // a label the filter let through (a pc below it in its bucket)
        if (start <= highest && !raw_entry_skipped(raw, entry)) labels.push_back(start);
        continue;
      }
      const size_t from = static_cast<size_t>(std::lower_bound(pcs.begin(), pcs.end(), start) - pcs.begin());
      if (from == n || pcs[from] >= end || raw_entry_skipped(raw, entry)) continue;  // it covers no pc
      std::optional<CodeSymbol> symbol = source.symbol(i);
      if (!symbol) continue;
      for (size_t j = from; j < n && pcs[j] < end; ++j) {
        symbol->name = source.name(*symbol);  // read for the few symbols that cover a pc
        if (symbol->name[0] == '\0') break;
        if (!best[j] || preferred(*symbol, *best[j])) best[j] = symbol;
      }
    } else if (__builtin_expect((entry.st_size | static_cast<uint64_t>(start > highest)) == 0, 0) &&
               !raw_entry_skipped(raw, entry)) {
      // (Sizeless and not above the highest pc in one test: gcc splits `a && b`, and even `a & b`,
      // into a branch on the address.)
      labels.push_back(start);
    }
  }
  std::vector<std::optional<SymbolAt>> found(n);
  // The pcs no sized symbol covers but a label lies at or below, with that label (the highest).
  std::sort(labels.begin(), labels.end());
  std::vector<std::pair<size_t, uint64_t>> weighed;
  for (size_t j = 0; j < n; ++j) {
    if (best[j]) {
      found[j] = SymbolAt{best[j]->name, pcs[j] - best[j]->start};
      continue;
    }
    const auto above = std::upper_bound(labels.begin(), labels.end(), pcs[j]);
    if (above != labels.begin()) weighed.emplace_back(j, *std::prev(above));
  }
  if (weighed.empty()) return found;
  // A sized symbol starting at or below the pc and ending above its label puts the label out of
  // reach (libdwfl's "min_label"): the pc then has no symbol.
  std::vector<bool> out_of_reach(weighed.size(), false);
  size_t left = weighed.size();
  for (int i = 1; i < count && left > 0; ++i) {
    const Elf64_Sym& entry = entries[i];
    if (entry.st_size == 0) continue;
    const uint64_t start = entry.st_value + bias;
    const uint64_t end = start + entry.st_size;
    for (size_t k = 0; k < weighed.size(); ++k) {
      if (out_of_reach[k] || start > pcs[weighed[k].first] || end <= weighed[k].second) continue;
      if (raw_entry_skipped(raw, entry)) break;
      out_of_reach[k] = true;
      --left;
    }
  }
  for (size_t k = 0; k < weighed.size(); ++k) {
    if (!out_of_reach[k]) found[weighed[k].first] = libdwfl_lookup(module, pcs[weighed[k].first]);
  }
  return found;
}

}  // namespace

std::vector<std::optional<SymbolAt>> DwflSymbolIndex::find_in_one_pass(Dwfl_Module* module,
                                                                       const std::vector<uint64_t>& pcs) {
  const size_t n = pcs.size();
  if (n == 0) return {};
  const SymbolSource source(module);
  if (const RawSymbolTable* raw = source.raw()) return raw_table_pass(module, source, *raw, pcs);
  // Else each symbol through SymbolSource (libdwfl's calls where the table is not read raw).
  std::vector<std::optional<CodeSymbol>> best(n);
  // A symbol starting at s weighs on every pc from lower_bound(s) on: its end on their reach
  // (find()'s max_end_), a label's start on their last label. Kept at that first pc only, and
  // carried forward after the pass, they cost one binary search per symbol.
  std::vector<uint64_t> reach_from(n, 0);
  std::vector<std::optional<uint64_t>> label_from(n);
  const uint64_t lowest = pcs.front();
  const uint64_t highest = pcs.back();
  // A symbol not above the highest pc weighed on the pcs: its start and end on their labels and
  // reach, and where it covers one, as a candidate.
  auto weigh = [&](const CodeSymbol& candidate) {
    const uint64_t start = candidate.start;
    const uint64_t size = candidate.size;
    // Most symbols of a big module lie wholly below the lowest pc: they weigh on all pcs (from 0).
    if (size == 0 && start <= lowest) {
      label_from[0] = std::max(label_from[0].value_or(0), start);
      return;
    }
    if (size != 0 && start + size <= lowest) {
      reach_from[0] = std::max(reach_from[0], start + size);
      return;
    }
    const size_t from = static_cast<size_t>(std::lower_bound(pcs.begin(), pcs.end(), start) - pcs.begin());
    if (from == n) return;
    if (size == 0) {
      label_from[from] = std::max(label_from[from].value_or(0), start);
      return;
    }
    const uint64_t end = start + size;
    reach_from[from] = std::max(reach_from[from], end);
    if (pcs[from] >= end) return;  // it covers no pc
    std::optional<CodeSymbol> symbol = candidate;
    for (size_t j = from; j < n && pcs[j] < end; ++j) {
      symbol->name = source.name(*symbol);  // read for the few symbols that cover a pc
      if (symbol->name[0] == '\0') break;
      if (!best[j] || preferred(*symbol, *best[j])) best[j] = symbol;
    }
  };
  const int count = source.count();
  for (int i = 1; i < count; ++i) {
    if (source.starts_above(i, highest)) continue;  // as lower_bound's n, without the search
    if (const std::optional<CodeSymbol> symbol = source.symbol(i)) weigh(*symbol);
  }
  std::vector<std::optional<SymbolAt>> found(n);
  uint64_t reach = 0;
  std::optional<uint64_t> label;
  for (size_t j = 0; j < n; ++j) {
    reach = std::max(reach, reach_from[j]);
    if (label_from[j]) label = std::max(label.value_or(0), *label_from[j]);
    if (best[j]) {
      found[j] = SymbolAt{best[j]->name, pcs[j] - best[j]->start};
    } else if (label && *label >= reach) {
      // As find(): a sizeless label no sized symbol reaches past is weighed by libdwfl itself.
      found[j] = libdwfl_lookup(module, pcs[j]);
    }
  }
  return found;
}

}  // namespace hangpy::native
