#include "symbols/elf_header_image.h"

#include <elf.h>

#include <cstring>

namespace hangpy::symbols {
namespace {

template <typename T>
T at(std::span<const std::byte> image, uint64_t offset) {
  T value;
  std::memcpy(&value, image.data() + offset, sizeof value);
  return value;
}

uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) & ~(alignment - 1); }

// The build-id among one note segment's notes (nullopt when it has none); false when a note does
// not end inside the segment with its padding, or anything but zeros follows the last one: a
// segment ElfFile would read otherwise is no plain case.
bool notes_of(std::span<const std::byte> notes, uint64_t alignment, std::optional<std::string>& build_id) {
  uint64_t offset = 0;
  while (offset < notes.size()) {
    if (notes.size() - offset < sizeof(Elf64_Nhdr)) break;
    const auto header = at<Elf64_Nhdr>(notes, offset);
    const uint64_t name_at = offset + sizeof header;
    const uint64_t desc_at = align_up(name_at + header.n_namesz, alignment);
    const uint64_t next = align_up(desc_at + header.n_descsz, alignment);
    if (next > notes.size()) return false;
    const auto* name = reinterpret_cast<const char*>(notes.data() + name_at);
    if (!build_id && header.n_type == NT_GNU_BUILD_ID && header.n_descsz != 0 &&
        std::string_view(name, strnlen(name, header.n_namesz)) == "GNU") {
      build_id = to_hex(notes.subspan(desc_at, header.n_descsz));
    }
    offset = next;
  }
  for (; offset < notes.size(); ++offset)
    if (notes[offset] != std::byte{0}) return false;
  return true;
}

}  // namespace

std::optional<HeaderImageFacts> read_plain_header_image(std::span<const std::byte> image) {
  if (image.size() < sizeof(Elf64_Ehdr)) return std::nullopt;
  const auto header = at<Elf64_Ehdr>(image, 0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_ident[EI_VERSION] != EV_CURRENT ||
      (header.e_type != ET_EXEC && header.e_type != ET_DYN) || header.e_phentsize != sizeof(Elf64_Phdr) ||
      header.e_phnum == 0 || header.e_phnum == PN_XNUM || header.e_shnum == 0 ||
      header.e_shstrndx == SHN_XINDEX || header.e_phoff > image.size() ||
      (image.size() - header.e_phoff) / sizeof(Elf64_Phdr) < header.e_phnum) {
    return std::nullopt;
  }
  HeaderImageFacts facts;
  // One allocation, not one per doubling: a torch rank's 315 headers cost 270,000 instructions
  // of vector growth (four PT_LOAD each).
  size_t loads = 0;
  for (uint64_t i = 0; i < header.e_phnum; ++i)
    loads += at<Elf64_Phdr>(image, header.e_phoff + i * sizeof(Elf64_Phdr)).p_type == PT_LOAD;
  facts.load_segments.reserve(loads);
  bool saw_notes = false;
  for (uint64_t i = 0; i < header.e_phnum; ++i) {
    const auto segment = at<Elf64_Phdr>(image, header.e_phoff + i * sizeof(Elf64_Phdr));
    if (segment.p_type == PT_LOAD) {
      facts.load_segments.push_back(LoadSegment{segment.p_vaddr, segment.p_memsz, segment.p_offset,
                                                std::min(segment.p_filesz, segment.p_memsz), segment.p_flags});
    } else if (segment.p_type == PT_NOTE && segment.p_filesz != 0) {
      saw_notes = true;
      // ElfFile reads an 8-aligned note segment (.note.gnu.property) with 8-byte padding.
      const uint64_t alignment = segment.p_align == 8 ? 8 : 4;
      if (segment.p_offset % 4 != 0 || segment.p_offset > image.size() ||
          image.size() - segment.p_offset < segment.p_filesz ||
          !notes_of(image.subspan(segment.p_offset, segment.p_filesz), alignment, facts.build_id)) {
        return std::nullopt;
      }
    }
  }
  // Without a note segment ElfFile looks for note sections, which an image of the first page
  // does not hold but a small file's may.
  if (!saw_notes) return std::nullopt;
  return facts;
}

}  // namespace hangpy::symbols
