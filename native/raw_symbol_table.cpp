#include "native/raw_symbol_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace hangpy::native {
namespace {

// How many entries, spread over the table, must read as libdwfl reads them. What the proof guards
// against (another table of the same length, another bias, entries that differ) shows in any
// entry; each sampled name costs libdwfl a page of the string table, faulted in at random (and
// a second one through our own mapping of a debug file): 32 samples cost python3.11-dbg's table
// 1 ms more than 8 on a DDP rank's core.
constexpr int kSampledEntries = 8;

Elf_Scn* table_section(Elf* elf) {
  Elf_Scn* dynsym = nullptr;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr; section = elf_nextscn(elf, section)) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr) return nullptr;
    if (header.sh_type == SHT_SYMTAB) return section;  // libdwfl prefers the full table
    if (header.sh_type == SHT_DYNSYM) dynsym = section;
  }
  return dynsym;
}

bool has_merged_table_or_wide_indexes(Elf* elf) {
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return true;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr; section = elf_nextscn(elf, section)) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr) return true;
    if (header.sh_type == SHT_SYMTAB_SHNDX) return true;
    const char* name = elf_strptr(elf, names, header.sh_name);
    if (name != nullptr && std::strcmp(name, ".gnu_debugdata") == 0) return true;
  }
  return false;
}

}  // namespace

struct RawSymbolTable::OwnedElf {
  int fd = -1;
  Elf* elf = nullptr;
  ~OwnedElf() {
    if (elf != nullptr) elf_end(elf);
    if (fd >= 0) close(fd);
  }
};

std::optional<RawSymbolTable> RawSymbolTable::of(Dwfl_Module* module) {
  const int count = dwfl_module_getsymtab(module);  // also makes libdwfl choose its table
  GElf_Addr bias = 0;
  Elf* main_elf = dwfl_module_getelf(module, &bias);
  if (count <= 1 || main_elf == nullptr) return std::nullopt;
  if (auto table = read(module, count, main_elf, bias)) return table;
  const char* debug_file = nullptr;
  dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &debug_file);
  if (debug_file == nullptr) return std::nullopt;
  auto owned = std::make_shared<OwnedElf>();
  owned->fd = open(debug_file, O_RDONLY | O_CLOEXEC);
  if (owned->fd < 0) return std::nullopt;
  owned->elf = elf_begin(owned->fd, ELF_C_READ_MMAP, nullptr);
  if (owned->elf == nullptr) return std::nullopt;
  auto table = read(module, count, owned->elf, bias);
  if (table) table->owned_ = std::move(owned);
  return table;
}

std::optional<RawSymbolTable> RawSymbolTable::read(Dwfl_Module* module, int count, Elf* elf, uint64_t bias) {
  if (gelf_getclass(elf) != ELFCLASS64) return std::nullopt;
  GElf_Ehdr file_header;
  if (gelf_getehdr(elf, &file_header) == nullptr ||
      (file_header.e_type != ET_EXEC && file_header.e_type != ET_DYN))
    return std::nullopt;
  if (has_merged_table_or_wide_indexes(elf)) return std::nullopt;
  Elf_Scn* section = table_section(elf);
  GElf_Shdr header;
  if (section == nullptr || gelf_getshdr(section, &header) == nullptr) return std::nullopt;
  Elf_Data* data = elf_getdata(section, nullptr);
  if (data == nullptr || data->d_type != ELF_T_SYM || data->d_buf == nullptr ||
      data->d_size / sizeof(Elf64_Sym) != static_cast<size_t>(count))
    return std::nullopt;

  RawSymbolTable table;
  table.elf_ = elf;
  table.symbols_ = static_cast<const Elf64_Sym*>(data->d_buf);
  table.count_ = count;
  table.bias_ = bias;
  table.string_section_ = header.sh_link;
  size_t sections = 0;
  if (elf_getshdrnum(elf, &sections) != 0) return std::nullopt;
  table.allocated_.assign(sections, 0);
  for (Elf_Scn* each = elf_nextscn(elf, nullptr); each != nullptr; each = elf_nextscn(elf, each)) {
    GElf_Shdr each_header;
    if (gelf_getshdr(each, &each_header) == nullptr) return std::nullopt;
    const size_t index = elf_ndxscn(each);
    if (index < sections) table.allocated_[index] = (each_header.sh_flags & SHF_ALLOC) != 0 ? 1 : 0;
  }

  // The proof that this is libdwfl's table, read as libdwfl reads it.
  int compared = 0;
  for (int k = 0; k < kSampledEntries; ++k) {
    const int i = 1 + static_cast<int>(static_cast<int64_t>(count - 2) * k / (kSampledEntries - 1));
    const Elf64_Sym& raw = table.entry(i);
    if (raw.st_shndx == SHN_UNDEF || raw.st_shndx >= SHN_LORESERVE || !table.in_allocated_section(i)) continue;
    GElf_Sym symbol;
    GElf_Addr address = 0;
    GElf_Word symbol_section = 0;
    const char* name = dwfl_module_getsym_info(module, i, &symbol, &address, &symbol_section, nullptr, nullptr);
    const char* raw_name = table.name(i);
    // The same table through the same Elf gives the very same pointer: no page of the string
    // table is read for the proof then (a torch library's are spread over megabytes, and each
    // sampled name would fault a page of it in). Another Elf of the file (the debug file's) is
    // compared by content.
    const bool same_name = name == raw_name || (name != nullptr && raw_name != nullptr && std::strcmp(name, raw_name) == 0);
    if (name == nullptr || raw_name == nullptr || !same_name ||
        address != table.address(i) || symbol_section != raw.st_shndx || symbol.st_info != raw.st_info ||
        symbol.st_size != raw.st_size)
      return std::nullopt;
    ++compared;
  }
  if (compared == 0) return std::nullopt;
  return table;
}

const char* RawSymbolTable::name(int i) const {
  // elf_strptr checks the offset against the table and that the string ends inside it.
  return elf_strptr(elf_, string_section_, symbols_[i].st_name);
}

}  // namespace hangpy::native
