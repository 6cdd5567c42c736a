#include "inputs/elf_extent.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace hangpy::inputs {

void ElfExtent::feed(std::span<const std::byte> data) {
  if (extent_ || given_up_ || head_.size() >= kMaxHeaderBytes) return;
  if (is_elf_ == false) return;
  const size_t take = std::min(data.size(), kMaxHeaderBytes - head_.size());
  head_.insert(head_.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
  if (!is_elf_ && head_.size() >= SELFMAG) is_elf_ = std::memcmp(head_.data(), ELFMAG, SELFMAG) == 0;
  compute();
}

std::optional<bool> ElfExtent::is_elf() const { return is_elf_; }

void ElfExtent::compute() {
  if (head_.size() < sizeof(Elf64_Ehdr)) return;
  Elf64_Ehdr header;
  std::memcpy(&header, head_.data(), sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_phentsize != sizeof(Elf64_Phdr) ||
      header.e_phnum == PN_XNUM) {
    given_up_ = true;
    return;
  }
  const uint64_t table_end = header.e_phoff + uint64_t{header.e_phnum} * sizeof(Elf64_Phdr);
  if (header.e_phoff > kMaxHeaderBytes || table_end > kMaxHeaderBytes) {
    given_up_ = true;
    return;
  }
  if (head_.size() < table_end) return;  // more bytes to come
  uint64_t end = std::max<uint64_t>(sizeof(Elf64_Ehdr), table_end);
  if (header.e_shoff != 0) end = std::max(end, header.e_shoff + uint64_t{header.e_shnum} * header.e_shentsize);
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, head_.data() + header.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr), sizeof(segment));
    if (segment.p_offset + segment.p_filesz >= segment.p_offset)  // no wrap-around
      end = std::max(end, segment.p_offset + segment.p_filesz);
  }
  extent_ = end;
  head_.clear();
  head_.shrink_to_fit();
}

}  // namespace hangpy::inputs
