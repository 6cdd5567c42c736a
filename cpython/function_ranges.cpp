// The .eh_frame_hdr search table and the frame description entries it points to, read through
// the target's memory. Written here rather than with libdw's CFI reader (dwarf_getcfi_elf): that
// one wants an Elf handle on the module's file, and the engine reads a target only through its
// AddressSpace (a gdb inferior, a live process, a core whose files are elsewhere or absent, a
// snapshot); and only each entry's address range is needed, never its unwinding program.
#include "cpython/function_ranges.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>

namespace hangpy::cpython {
namespace {

constexpr uint32_t kGnuEhFrame = 0x6474e550;  // PT_GNU_EH_FRAME
constexpr uint32_t kLoad = 1;                 // PT_LOAD
constexpr uint16_t kMaxProgramHeaders = 512;
// The search table's usual encoding (GNU ld, gold, lld, mold): 4-byte signed offsets from the
// header's own address. Another encoding is not searched (no linker in use writes one).
constexpr uint8_t kDataRelativeSigned4 = 0x3b;
constexpr uint8_t kOmit = 0xff;
// A CIE's fixed part, its augmentation string and the few numbers before the 'R' byte fit here.
constexpr size_t kMaxCieBytes = 96;

// A bounded little-endian reader over bytes read from `base` onwards.
class Cursor {
 public:
  Cursor(std::span<const std::byte> bytes, uint64_t base) : bytes_(bytes), base_(base) {}
  uint64_t address() const { return base_ + at_; }
  bool failed() const { return failed_; }

  template <typename T>
  T fixed() {
    T value{};
    if (at_ + sizeof(T) > bytes_.size()) {
      failed_ = true;
      return value;
    }
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  uint64_t uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      auto byte = fixed<uint8_t>();
      if (failed_) return 0;
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    failed_ = true;
    return 0;
  }
  void sleb() { (void)uleb(); }  // only skipped: its value is never needed here

  // A pointer in DWARF's exception-header encoding: the low nibble is its size and sign, the
  // high one what it is relative to (only "absolute", "to itself" and "to `data_base`" occur).
  std::optional<uint64_t> encoded(uint8_t encoding, uint64_t data_base, bool apply = true) {
    const uint64_t at = address();
    uint64_t value = 0;
    switch (encoding & 0x0f) {
      case 0x00: case 0x04: value = fixed<uint64_t>(); break;                       // absptr, udata8
      case 0x02: value = fixed<uint16_t>(); break;                                  // udata2
      case 0x03: value = fixed<uint32_t>(); break;                                  // udata4
      case 0x0a: value = static_cast<uint64_t>(int64_t{fixed<int16_t>()}); break;   // sdata2
      case 0x0b: value = static_cast<uint64_t>(int64_t{fixed<int32_t>()}); break;   // sdata4
      case 0x0c: value = fixed<uint64_t>(); break;                                  // sdata8
      case 0x01: value = uleb(); break;
      default: return std::nullopt;
    }
    if (failed_) return std::nullopt;
    if (!apply) return value;
    switch (encoding & 0x70) {
      case 0x00: return value;
      case 0x10: return at + value;         // pcrel
      case 0x30: return data_base + value;  // datarel
      default: return std::nullopt;
    }
  }

 private:
  std::span<const std::byte> bytes_;
  uint64_t base_ = 0;
  size_t at_ = 0;
  bool failed_ = false;
};

// How much of `encoding`'s pointer a reader skips; 0 for one it does not know.
size_t encoded_size(uint8_t encoding) {
  switch (encoding & 0x0f) {
    case 0x00: case 0x04: case 0x0c: return 8;
    case 0x02: case 0x0a: return 2;
    case 0x03: case 0x0b: return 4;
    default: return 0;
  }
}

struct ProgramHeader {
  uint32_t type;
  uint32_t flags;
  uint64_t offset, vaddr, paddr, filesz, memsz, align;
};
static_assert(sizeof(ProgramHeader) == 56);

}  // namespace

FunctionRanges::FunctionRanges(const AddressSpace& memory, std::vector<MappedModule> modules)
    : memory_(memory) {
  for (MappedModule& module : modules)
    if (module.end > module.start) modules_.push_back(std::move(module));
  std::sort(modules_.begin(), modules_.end(),
            [](const MappedModule& a, const MappedModule& b) { return a.start < b.start; });
}

std::optional<FunctionRanges::SearchTable> FunctionRanges::table_of(const MappedModule& module) const {
  std::array<std::byte, 64> header{};
  if (!memory_.read(module.start, header)) return std::nullopt;
  Cursor elf(header, module.start);
  if (elf.fixed<uint32_t>() != 0x464c457f || elf.fixed<uint8_t>() != 2) return std::nullopt;  // ELF64
  Cursor fields{std::span<const std::byte>(header).subspan(0x20), module.start + 0x20};
  const auto table_offset = fields.fixed<uint64_t>();
  (void)fields.fixed<uint64_t>();  // e_shoff
  (void)fields.fixed<uint32_t>();  // e_flags
  (void)fields.fixed<uint16_t>();  // e_ehsize
  const auto entry_size = fields.fixed<uint16_t>();
  const auto count = fields.fixed<uint16_t>();
  if (fields.failed() || entry_size != sizeof(ProgramHeader) || count == 0 || count > kMaxProgramHeaders ||
      table_offset > module.end - module.start)
    return std::nullopt;
  std::vector<ProgramHeader> headers(count);
  if (!memory_.read(module.start + table_offset, std::as_writable_bytes(std::span(headers))))
    return std::nullopt;
  // The load bias: the segment that maps the file's first byte is at the module's start.
  std::optional<uint64_t> bias;
  const ProgramHeader* eh_frame = nullptr;
  for (const ProgramHeader& segment : headers) {
    if (segment.type == kLoad && segment.offset == 0 && !bias) bias = module.start - segment.vaddr;
    if (segment.type == kGnuEhFrame) eh_frame = &segment;
  }
  if (!bias || !eh_frame || eh_frame->memsz < 12) return std::nullopt;
  const uint64_t address = *bias + eh_frame->vaddr;
  std::array<std::byte, 32> head{};
  const size_t head_size = std::min<uint64_t>(head.size(), eh_frame->memsz);
  if (!memory_.read(address, std::span(head).first(head_size))) return std::nullopt;
  Cursor cursor{std::span<const std::byte>(head).first(head_size), address};
  const auto version = cursor.fixed<uint8_t>();
  const auto frame_encoding = cursor.fixed<uint8_t>();
  const auto count_encoding = cursor.fixed<uint8_t>();
  const auto table_encoding = cursor.fixed<uint8_t>();
  if (cursor.failed() || version != 1 || table_encoding != kDataRelativeSigned4 ||
      frame_encoding == kOmit || count_encoding == kOmit)
    return std::nullopt;
  if (!cursor.encoded(frame_encoding, address)) return std::nullopt;  // .eh_frame itself: unused
  auto entries = cursor.encoded(count_encoding, address);
  if (!entries) return std::nullopt;
  SearchTable table{address, cursor.address(), *entries};
  // Each entry is two 4-byte offsets; a count the segment cannot hold is corrupt.
  const uint64_t room = eh_frame->memsz - (table.entries - address);
  if (table.count == 0 || table.count > room / 8) return std::nullopt;
  return table;
}

std::optional<MemoryRange> FunctionRanges::entry_range(const SearchTable& table, uint64_t fde) const {
  std::array<std::byte, 32> bytes{};
  if (!memory_.read(fde, bytes)) return std::nullopt;
  Cursor entry(bytes, fde);
  const auto length = entry.fixed<uint32_t>();
  if (length == 0 || length == 0xffffffff) return std::nullopt;  // a terminator; 64-bit DWARF
  const uint64_t pointer_at = entry.address();
  const auto cie_offset = entry.fixed<uint32_t>();
  if (cie_offset == 0 || cie_offset > pointer_at) return std::nullopt;  // a CIE, not an FDE
  const uint64_t cie = pointer_at - cie_offset;
  auto [known, added] = pointer_encodings_.try_emplace(cie);
  if (added) {
    // The CIE's augmentation tells how the FDE's own pointers are encoded ('R'; absolute when
    // absent).
    std::array<std::byte, kMaxCieBytes> cie_bytes{};
    // A CIE is short and may end the mapping: a shorter read where the long one fails.
    size_t cie_size = cie_bytes.size();
    if (!memory_.read(cie, cie_bytes)) cie_size = memory_.read(cie, std::span(cie_bytes).first(24)) ? 24 : 0;
    if (cie_size > 0) {
      Cursor c{std::span<const std::byte>(cie_bytes).first(cie_size), cie};
      (void)c.fixed<uint32_t>();
      const auto id = c.fixed<uint32_t>();
      const auto version = c.fixed<uint8_t>();
      std::string augmentation;
      for (char ch = static_cast<char>(c.fixed<uint8_t>()); ch != '\0' && !c.failed() && augmentation.size() < 16;
           ch = static_cast<char>(c.fixed<uint8_t>()))
        augmentation += ch;
      if (augmentation.find("eh") != std::string::npos) (void)c.fixed<uint64_t>();
      if (version == 4) (void)c.fixed<uint16_t>();  // address and segment selector sizes
      (void)c.uleb();  // code alignment
      c.sleb();        // data alignment
      if (version == 1) (void)c.fixed<uint8_t>(); else (void)c.uleb();  // return address column
      std::optional<uint8_t> encoding = uint8_t{0};
      if (augmentation.starts_with("z")) {
        (void)c.uleb();
        for (char letter : augmentation.substr(1)) {
          if (letter == 'R') {
            encoding = c.fixed<uint8_t>();
            break;
          }
          if (letter == 'P') {
            const auto personality = c.fixed<uint8_t>();
            const size_t skip = encoded_size(personality);
            if (skip == 0) { encoding.reset(); break; }
            for (size_t i = 0; i < skip; ++i) (void)c.fixed<uint8_t>();
          } else if (letter == 'L') {
            (void)c.fixed<uint8_t>();
          } else if (letter != 'S' && letter != 'B') {
            encoding.reset();  // an augmentation not known here: its data cannot be skipped
            break;
          }
        }
      }
      if (!c.failed() && id == 0 && (version == 1 || version == 3 || version == 4))
        known->second = encoding;
    }
  }
  if (!known->second) return std::nullopt;
  const uint8_t encoding = *known->second;
  auto start = entry.encoded(encoding, table.header);
  auto size = entry.encoded(encoding & 0x0f, table.header, /*apply=*/false);
  if (!start || !size || *size == 0 || *start + *size < *start) return std::nullopt;
  return MemoryRange{*start, *start + *size};
}

std::optional<MemoryRange> FunctionRanges::function_at(uint64_t pc) const {
  auto after = std::upper_bound(modules_.begin(), modules_.end(), pc,
                                [](uint64_t value, const MappedModule& m) { return value < m.start; });
  if (after == modules_.begin()) return std::nullopt;
  const MappedModule& module = *std::prev(after);
  if (pc >= module.end) return std::nullopt;
  auto [cached, added] = tables_.try_emplace(module.start);
  if (added) cached->second = table_of(module);
  if (!cached->second) return std::nullopt;
  const SearchTable& table = *cached->second;
  // The last entry that starts at or before pc: a binary search, one 8-byte entry read per step.
  auto entry = [&](uint64_t index) -> std::optional<std::pair<uint64_t, uint64_t>> {
    std::array<int32_t, 2> pair{};
    if (!memory_.read(table.entries + index * 8, std::as_writable_bytes(std::span(pair))))
      return std::nullopt;
    return std::pair{table.header + static_cast<uint64_t>(int64_t{pair[0]}),
                     table.header + static_cast<uint64_t>(int64_t{pair[1]})};
  };
  uint64_t low = 0, high = table.count;  // the answer is in [low, high)
  std::optional<std::pair<uint64_t, uint64_t>> found;
  while (low < high) {
    const uint64_t middle = low + (high - low) / 2;
    auto probe = entry(middle);
    if (!probe) return std::nullopt;
    if (probe->first <= pc) {
      found = probe;
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  if (!found) return std::nullopt;
  auto range = entry_range(table, found->second);
  if (!range || range->start != found->first || pc >= range->end) return std::nullopt;
  return range;
}

}  // namespace hangpy::cpython
