#include "symbols/elf_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <unordered_map>

namespace hangpy::symbols {

struct ElfFile::Handles {
  int fd = -1;
  std::vector<std::byte> buffer;  // backs `elf` for images built from memory
  // open_by_segments: our own private mapping of the file, whose ELF header libelf reads with the
  // section table taken out; `file_header` is what the file itself holds there.
  void* mapping = nullptr;
  size_t mapping_size = 0;
  std::optional<Elf64_Ehdr> file_header;
  Elf* elf = nullptr;

  Handles() = default;
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  ~Handles() {
    if (elf != nullptr) elf_end(elf);  // before the fd or buffer it maps goes away
    if (mapping != nullptr) ::munmap(mapping, mapping_size);
    if (fd >= 0) ::close(fd);
  }
};

struct ElfFile::SymbolTable {
  Elf_Data* symbols = nullptr;
  size_t count = 0;
  size_t string_section = 0;  // section index for elf_strptr
  Elf_Data* gnu_hash = nullptr;
};

struct ElfFile::NamedSymbolIndex {
  struct Entry {
    Symbol symbol;
    bool global = false;
  };
  std::unordered_map<std::string, Entry> by_name;
};

struct ElfFile::AddressIndex {
  std::vector<Symbol> symbols;    // sorted by value; among equal values the preferred one last
  std::vector<uint64_t> max_end;  // max_end[i] = largest value + size among symbols[0..i]
};

namespace {

bool libelf_ready() {
  static const bool ready = elf_version(EV_CURRENT) != EV_NONE;
  return ready;
}

const char* libelf_message() { return elf_errmsg(-1); }

// The hash function of DT_GNU_HASH (the "djb2" string hash, truncated to 32 bits).
uint32_t gnu_hash(std::string_view name) {
  uint32_t hash = 5381;
  for (unsigned char c : name) hash = hash * 33 + c;
  return hash;
}

template <typename T>
std::optional<T> read_at(std::span<const std::byte> bytes, uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::span<const std::byte> data_bytes(const Elf_Data* data) {
  if (data == nullptr || data->d_buf == nullptr) return {};
  return {static_cast<const std::byte*>(data->d_buf), data->d_size};
}

bool is_nameable(const GElf_Sym& sym) {
  const unsigned type = GELF_ST_TYPE(sym.st_info);
  return sym.st_shndx != SHN_UNDEF && type != STT_SECTION && type != STT_FILE;
}

}  // namespace

std::string to_hex(std::span<const std::byte> bytes) {
  // By hand: a format call per byte cost more than the rest of opening a file.
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(bytes.size() * 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    hex[2 * i] = kDigits[std::to_integer<unsigned>(bytes[i]) >> 4];
    hex[2 * i + 1] = kDigits[std::to_integer<unsigned>(bytes[i]) & 0xf];
  }
  return hex;
}

ElfFile::ElfFile(std::string path, std::unique_ptr<Handles> handles)
    : path_(std::move(path)), handles_(std::move(handles)) {}

ElfFile::~ElfFile() = default;

namespace {

// The file opened for reading, checked to be a non-empty regular file; its size.
Expected<size_t> open_regular_file(const std::string& path, int& fd) {
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(ErrorKind::kIo,
                      fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    return make_error(ErrorKind::kIo,
                      fmt::format("cannot stat {}: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(status.st_mode)) {
    return make_error(ErrorKind::kInvalidInput, fmt::format("{} is not a regular file", path));
  }
  if (status.st_size == 0) {
    return make_error(ErrorKind::kInvalidInput, fmt::format("{} is an empty file", path));
  }
  return static_cast<size_t>(status.st_size);
}

}  // namespace

Expected<std::unique_ptr<ElfFile>> ElfFile::open(const std::string& path) {
  if (!libelf_ready()) return make_error(ErrorKind::kIo, "libelf version mismatch");
  auto handles = std::make_unique<Handles>();
  if (auto size = open_regular_file(path, handles->fd); !size) return std::unexpected(size.error());
  handles->elf = elf_begin(handles->fd, ELF_C_READ_MMAP, nullptr);
  if (handles->elf == nullptr) {
    return make_error(ErrorKind::kIo, fmt::format("cannot map {}: {}", path, libelf_message()));
  }
  return finish_open(path, std::move(handles));
}

Expected<std::unique_ptr<ElfFile>> ElfFile::open_by_segments(const std::string& path) {
  if (!libelf_ready()) return make_error(ErrorKind::kIo, "libelf version mismatch");
  auto handles = std::make_unique<Handles>();
  auto size = open_regular_file(path, handles->fd);
  if (!size) return std::unexpected(size.error());
  Elf64_Ehdr header{};
  const bool by_segments =
      *size >= sizeof header && ::pread(handles->fd, &header, sizeof header, 0) == sizeof header &&
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 && header.e_ident[EI_CLASS] == ELFCLASS64 &&
      header.e_phnum != 0 && header.e_phnum != PN_XNUM && header.e_shstrndx != SHN_XINDEX;
  if (!by_segments) return open(path);
  // Private and read-only, but for the header's page, made writable alone so that patching it
  // makes a copy of our own (the file and the page cache stay as they are) and only that page
  // is charged to the machine's commit limit (a writable mapping of a 50 GB core would be, whole,
  // where overcommit is strict). Where either is refused, the file is opened as open() does.
  void* mapping = ::mmap(nullptr, *size, PROT_READ, MAP_PRIVATE, handles->fd, 0);
  if (mapping == MAP_FAILED) return open(path);
  handles->mapping = mapping;
  handles->mapping_size = *size;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (::mprotect(mapping, std::min(*size, page), PROT_READ | PROT_WRITE) != 0) return open(path);
  handles->file_header = header;
  header.e_shoff = 0;
  header.e_shnum = 0;
  header.e_shstrndx = SHN_UNDEF;
  std::memcpy(mapping, &header, sizeof header);
  handles->elf = elf_memory(static_cast<char*>(mapping), *size);
  if (handles->elf == nullptr) {
    return make_error(ErrorKind::kIo, fmt::format("cannot read {}: {}", path, libelf_message()));
  }
  auto file = finish_open(path, std::move(handles));
  // Without a note segment, notes() reads the note sections, which only open() shows.
  if (file && (*file)->notes_end() == 0) return open(path);
  return file;
}

Expected<std::unique_ptr<ElfFile>> ElfFile::from_image(std::vector<std::byte> image,
                                                       std::string name) {
  auto handles = std::make_unique<Handles>();
  handles->buffer = std::move(image);
  const std::span<std::byte> bytes(handles->buffer);  // before `handles` is moved into the call
  return open_image(bytes, std::move(name), std::move(handles));
}

Expected<std::unique_ptr<ElfFile>> ElfFile::from_borrowed_image(std::span<std::byte> image,
                                                                std::string name) {
  return open_image(image, std::move(name), std::make_unique<Handles>());
}

Expected<std::unique_ptr<ElfFile>> ElfFile::open_image(std::span<std::byte> image, std::string name,
                                                       std::unique_ptr<Handles> handles) {
  if (!libelf_ready()) return make_error(ErrorKind::kIo, "libelf version mismatch");
  if (image.empty()) {
    return make_error(ErrorKind::kInvalidInput, fmt::format("{} is an empty image", name));
  }
  handles->elf = elf_memory(reinterpret_cast<char*>(image.data()), image.size());
  if (handles->elf == nullptr) {
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("{}: not an ELF image: {}", name, libelf_message()));
  }
  return finish_open(std::move(name), std::move(handles));
}

Expected<std::unique_ptr<ElfFile>> ElfFile::finish_open(std::string path,
                                                        std::unique_ptr<Handles> handles) {
  if (elf_kind(handles->elf) != ELF_K_ELF) {
    return make_error(ErrorKind::kInvalidInput, fmt::format("{} is not an ELF file", path));
  }
  std::unique_ptr<ElfFile> file(new ElfFile(std::move(path), std::move(handles)));
  if (auto ok = file->read_headers(); !ok) return std::unexpected(ok.error());
  return file;
}

Expected<void> ElfFile::read_headers() {
  Elf* elf = handles_->elf;
  size_t raw_size = 0;
  const char* raw = elf_rawfile(elf, &raw_size);
  if (raw == nullptr) {
    return make_error(ErrorKind::kIo, fmt::format("cannot map {}: {}", path_, libelf_message()));
  }
  image_ = {reinterpret_cast<const std::byte*>(raw), raw_size};

  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) {
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("{}: unreadable ELF header: {}", path_, libelf_message()));
  }
  type_ = ehdr.e_type;
  machine_ = ehdr.e_machine;

  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) phnum = 0;  // corrupt count: treat as no segments
  // Room for as many as a core has (libelf bounds phnum by the file's size, a hostile one's too).
  load_segments_.reserve(std::min<size_t>(phnum, size_t{1} << 16));
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) break;  // past the file end
    if (phdr.p_type == PT_NOTE && phdr.p_offset <= ~uint64_t{0} - phdr.p_filesz)
      notes_end_ = std::max(notes_end_, phdr.p_offset + phdr.p_filesz);
    if (phdr.p_type != PT_LOAD) continue;
    load_segments_.push_back(LoadSegment{phdr.p_vaddr, phdr.p_memsz, phdr.p_offset,
                                         std::min(phdr.p_filesz, phdr.p_memsz), phdr.p_flags});
  }

  // A core's notes are the dumped process's, not a build-id of the core itself.
  if (type_ != ET_CORE) {
    if (auto notes_found = notes()) {
      for (const ElfNote& note : *notes_found) {
        if (note.name == "GNU" && note.type == NT_GNU_BUILD_ID && !note.desc.empty()) {
          build_id_ = to_hex(note.desc);
          break;
        }
      }
    }
  }
  return {};
}

namespace {

// The notes of one note segment; the offset in it where a note that makes no sense (a size past
// the segment's end) stopped the reading, nullopt when every byte was read (or only padding left).
std::optional<size_t> append_notes(Elf_Data* data, std::vector<ElfNote>& out) {
  const auto bytes = data_bytes(data);
  size_t offset = 0;
  auto stopped = [&bytes, &offset]() -> std::optional<size_t> {
    const auto rest = bytes.subspan(offset);
    if (std::all_of(rest.begin(), rest.end(), [](std::byte b) { return b == std::byte{0}; })) return std::nullopt;
    return offset;
  };
  GElf_Nhdr header;
  size_t name_offset = 0;
  size_t desc_offset = 0;
  while (offset < bytes.size()) {
    const size_t next = gelf_getnote(data, offset, &header, &name_offset, &desc_offset);
    if (next == 0 || next <= offset) return stopped();
    // gelf_getnote checks these already; a second check costs nothing and guards the spans.
    if (name_offset > bytes.size() || bytes.size() - name_offset < header.n_namesz ||
        desc_offset > bytes.size() || bytes.size() - desc_offset < header.n_descsz) {
      return stopped();
    }
    ElfNote note;
    const char* name = reinterpret_cast<const char*>(bytes.data() + name_offset);
    note.name.assign(name, strnlen(name, header.n_namesz));
    note.type = header.n_type;
    note.desc = bytes.subspan(desc_offset, header.n_descsz);
    out.push_back(std::move(note));
    offset = next;
  }
  return std::nullopt;
}

}  // namespace

ElfFile::Dependencies ElfFile::dependencies() const {
  constexpr size_t kMaxNeeded = 64;
  Elf* elf = handles_->elf;
  Dependencies found;
  std::string rpath;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_DYNAMIC || shdr.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) break;
    for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Dyn entry;
      if (gelf_getdyn(data, static_cast<int>(i), &entry) == nullptr || entry.d_tag == DT_NULL) break;
      if (entry.d_tag != DT_NEEDED && entry.d_tag != DT_RUNPATH && entry.d_tag != DT_RPATH) continue;
      const char* text = elf_strptr(elf, shdr.sh_link, entry.d_un.d_val);
      if (text == nullptr) continue;
      if (entry.d_tag == DT_NEEDED && found.needed.size() < kMaxNeeded) found.needed.emplace_back(text);
      if (entry.d_tag == DT_RUNPATH) found.run_path = text;
      if (entry.d_tag == DT_RPATH) rpath = text;
    }
    break;
  }
  if (found.run_path.empty()) found.run_path = rpath;  // DT_RUNPATH wins, as for the dynamic linker
  return found;
}

std::optional<uint64_t> ElfFile::section_address(std::string_view name) const {
  Elf* elf = handles_->elf;
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return std::nullopt;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || !(shdr.sh_flags & SHF_ALLOC)) continue;
    const char* section_name = elf_strptr(elf, names, shdr.sh_name);
    if (section_name != nullptr && name == section_name) return shdr.sh_addr;
  }
  return std::nullopt;
}

Expected<std::vector<ElfNote>> ElfFile::notes() const {
  Elf* elf = handles_->elf;
  std::vector<ElfNote> result;
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) phnum = 0;
  bool saw_note_segment = false;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) break;
    if (phdr.p_type != PT_NOTE || phdr.p_filesz == 0) continue;
    saw_note_segment = true;
    // Notes aligned to 8 (e.g. .note.gnu.property) pad their fields to 8 bytes.
    const Elf_Type note_type = phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
    Elf_Data* data =
        elf_getdata_rawchunk(elf, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, note_type);
    if (data == nullptr) {
      return make_error(ErrorKind::kCorrupt,
                        fmt::format("{}: note segment at offset 0x{:x} ({} bytes) is outside the "
                                    "file: {}",
                                    path_, phdr.p_offset, phdr.p_filesz, libelf_message()));
    }
    if (const std::optional<size_t> stopped = append_notes(data, result); stopped && !corrupt_notes_) {
      corrupt_notes_ = fmt::format("a note at offset 0x{:x} of the note segment (file offset 0x{:x}, {} bytes) "
                                   "claims more than the segment holds: the notes after it are ignored",
                                   *stopped, phdr.p_offset + *stopped, phdr.p_filesz);
    }
  }
  if (saw_note_segment) return result;

  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    if (Elf_Data* data = elf_getdata(scn, nullptr); data != nullptr) append_notes(data, result);
  }
  return result;
}

std::optional<ElfFile::SymbolTable> ElfFile::symbol_table(uint32_t section_type) const {
  Elf* elf = handles_->elf;
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) return std::nullopt;
  const size_t symbol_size =
      ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
  std::optional<SymbolTable> table;
  size_t table_index = 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    // NOBITS tables (in separate debug files) have no bytes behind them.
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != section_type) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr) continue;
    table = SymbolTable{data, data->d_size / symbol_size, shdr.sh_link, nullptr};
    table_index = elf_ndxscn(scn);
    break;
  }
  if (!table || section_type != SHT_DYNSYM) return table;

  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_GNU_HASH ||
        shdr.sh_link != table_index) {
      continue;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data != nullptr && data->d_buf != nullptr) table->gnu_hash = data;
    break;
  }
  return table;
}

namespace {

struct TableEntry {
  Symbol symbol;
  bool global = false;
};

std::optional<TableEntry> table_entry(Elf* elf, Elf_Data* symbols, size_t count,
                                      size_t string_section, size_t index) {
  if (index >= count) return std::nullopt;
  GElf_Sym sym;
  if (gelf_getsym(symbols, static_cast<int>(index), &sym) == nullptr) return std::nullopt;
  if (!is_nameable(sym)) return std::nullopt;
  const char* name = elf_strptr(elf, string_section, sym.st_name);
  if (name == nullptr || *name == '\0') return std::nullopt;
  const unsigned binding = GELF_ST_BIND(sym.st_info);
  return TableEntry{Symbol{name, sym.st_value, sym.st_size,
                           static_cast<unsigned char>(GELF_ST_TYPE(sym.st_info))},
                    binding == STB_GLOBAL || binding == STB_WEAK};
}

enum class HashLookup { kFound, kAbsent, kUnusable };

// Looks `name` up through a DT_GNU_HASH table. kUnusable means the table is malformed and the
// caller should scan instead; every offset into the table is checked against its size.
HashLookup gnu_hash_lookup(std::span<const std::byte> table, bool is_64bit, std::string_view name,
                           size_t symbol_count, const std::function<bool(size_t)>& matches,
                           size_t& found) {
  const auto nbuckets = read_at<uint32_t>(table, 0);
  const auto symoffset = read_at<uint32_t>(table, 4);
  const auto bloom_size = read_at<uint32_t>(table, 8);
  const auto bloom_shift = read_at<uint32_t>(table, 12);
  if (!nbuckets || !symoffset || !bloom_size || !bloom_shift) return HashLookup::kUnusable;
  if (*nbuckets == 0 || *bloom_size == 0 || *bloom_shift >= 32) return HashLookup::kUnusable;
  const uint64_t word_bytes = is_64bit ? 8 : 4;
  const uint64_t word_bits = word_bytes * 8;
  const uint64_t buckets_offset = 16 + uint64_t{*bloom_size} * word_bytes;
  const uint64_t chains_offset = buckets_offset + uint64_t{*nbuckets} * 4;
  if (chains_offset > table.size()) return HashLookup::kUnusable;

  const uint32_t hash = gnu_hash(name);
  const uint64_t bloom_offset = 16 + ((hash / word_bits) % *bloom_size) * word_bytes;
  const uint64_t bloom_word = is_64bit ? read_at<uint64_t>(table, bloom_offset).value_or(0)
                                       : read_at<uint32_t>(table, bloom_offset).value_or(0);
  const uint64_t mask =
      (uint64_t{1} << (hash % word_bits)) | (uint64_t{1} << ((hash >> *bloom_shift) % word_bits));
  if ((bloom_word & mask) != mask) return HashLookup::kAbsent;

  auto index = read_at<uint32_t>(table, buckets_offset + uint64_t{hash % *nbuckets} * 4);
  if (!index || *index < *symoffset) return HashLookup::kAbsent;
  for (uint64_t i = *index; i < symbol_count; ++i) {
    const auto chain = read_at<uint32_t>(table, chains_offset + (i - *symoffset) * 4);
    if (!chain) return HashLookup::kAbsent;
    if ((*chain | 1) == (hash | 1) && matches(i)) {
      found = i;
      return HashLookup::kFound;
    }
    if (*chain & 1) break;  // the last entry of this bucket's chain
  }
  return HashLookup::kAbsent;
}

}  // namespace

std::optional<Symbol> ElfFile::find_dynamic_symbol(std::string_view name) const {
  const auto table = symbol_table(SHT_DYNSYM);
  if (!table) return std::nullopt;
  Elf* elf = handles_->elf;
  auto entry_named = [&](size_t index) -> std::optional<TableEntry> {
    auto entry = table_entry(elf, table->symbols, table->count, table->string_section, index);
    if (entry && entry->symbol.name == name) return entry;
    return std::nullopt;
  };

  if (table->gnu_hash != nullptr) {
    GElf_Ehdr ehdr;
    const bool is_64bit =
        gelf_getehdr(elf, &ehdr) != nullptr && ehdr.e_ident[EI_CLASS] == ELFCLASS64;
    size_t found = 0;
    const auto result = gnu_hash_lookup(
        data_bytes(table->gnu_hash), is_64bit, name, table->count,
        [&](size_t index) { return entry_named(index).has_value(); }, found);
    if (result == HashLookup::kFound) return entry_named(found)->symbol;
    if (result == HashLookup::kAbsent) return std::nullopt;
  }
  for (size_t i = 0; i < table->count; ++i) {
    if (auto entry = entry_named(i)) return entry->symbol;
  }
  return std::nullopt;
}

const ElfFile::NamedSymbolIndex& ElfFile::named_index() const {
  std::call_once(named_index_once_, [this] {
    auto index = std::make_unique<NamedSymbolIndex>();
    if (const auto table = symbol_table(SHT_SYMTAB)) {
      for (size_t i = 0; i < table->count; ++i) {
        auto entry =
            table_entry(handles_->elf, table->symbols, table->count, table->string_section, i);
        if (!entry) continue;
        auto [it, inserted] = index->by_name.try_emplace(entry->symbol.name);
        if (inserted || (entry->global && !it->second.global)) {
          it->second = {std::move(entry->symbol), entry->global};
        }
      }
    }
    named_index_ = std::move(index);
  });
  return *named_index_;
}

std::optional<Symbol> ElfFile::find_symbol(std::string_view name) const {
  if (name.empty()) return std::nullopt;
  if (auto symbol = find_dynamic_symbol(name)) return symbol;
  const auto& index = named_index().by_name;
  if (auto it = index.find(std::string(name)); it != index.end()) return it->second.symbol;
  return std::nullopt;
}

const ElfFile::AddressIndex& ElfFile::address_index() const {
  std::call_once(address_index_once_, [this] {
    struct Ranked {
      Symbol symbol;
      int preference;
    };
    std::vector<Ranked> ranked;
    for (uint32_t section_type : {SHT_SYMTAB, SHT_DYNSYM}) {
      const auto table = symbol_table(section_type);
      if (!table) continue;
      for (size_t i = 0; i < table->count; ++i) {
        auto entry =
            table_entry(handles_->elf, table->symbols, table->count, table->string_section, i);
        if (!entry || entry->symbol.value == 0) continue;
        const unsigned type = entry->symbol.type;
        if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC) continue;
        ranked.push_back({std::move(entry->symbol), entry->global ? 1 : 0});
      }
    }
    std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
      if (a.symbol.value != b.symbol.value) return a.symbol.value < b.symbol.value;
      return a.preference < b.preference;
    });
    auto index = std::make_unique<AddressIndex>();
    uint64_t max_end = 0;
    for (auto& entry : ranked) {
      const uint64_t size = std::max<uint64_t>(entry.symbol.size, 1);
      const uint64_t end = entry.symbol.value + std::min(size, ~uint64_t{0} - entry.symbol.value);
      max_end = std::max(max_end, end);
      index->max_end.push_back(max_end);
      index->symbols.push_back(std::move(entry.symbol));
    }
    address_index_ = std::move(index);
  });
  return *address_index_;
}

std::optional<Symbol> ElfFile::symbol_at(uint64_t vaddr) const {
  const AddressIndex& index = address_index();
  auto it = std::upper_bound(index.symbols.begin(), index.symbols.end(), vaddr,
                             [](uint64_t address, const Symbol& s) { return address < s.value; });
  // Walk back only while some earlier symbol still reaches past vaddr (nested symbols).
  for (size_t i = static_cast<size_t>(it - index.symbols.begin()); i-- > 0;) {
    if (index.max_end[i] <= vaddr) break;
    const Symbol& symbol = index.symbols[i];
    const uint64_t size = std::max<uint64_t>(symbol.size, 1);
    if (vaddr - symbol.value < size) return symbol;
  }
  return std::nullopt;
}

Expected<void> ElfFile::read_vaddr(uint64_t vaddr, std::span<std::byte> out) const {
  for (const LoadSegment& segment : load_segments_) {
    if (vaddr < segment.vaddr || vaddr - segment.vaddr >= segment.memsz) continue;
    const uint64_t offset_in_segment = vaddr - segment.vaddr;
    if (offset_in_segment >= segment.filesz || segment.filesz - offset_in_segment < out.size()) {
      return make_error(ErrorKind::kNotFound,
                        fmt::format("{}: {} bytes at 0x{:x} are not backed by the file", path_,
                                    out.size(), vaddr),
                        vaddr);
    }
    if (segment.file_offset > ~uint64_t{0} - offset_in_segment) break;
    auto ok = read_file_offset(segment.file_offset + offset_in_segment, out);
    if (!ok) return make_error(ErrorKind::kCorrupt, ok.error().message, vaddr);
    return {};
  }
  if (out.empty()) return {};
  return make_error(ErrorKind::kNotFound,
                    fmt::format("{}: no loadable segment contains 0x{:x}", path_, vaddr), vaddr);
}

Expected<void> ElfFile::read_file_offset(uint64_t offset, std::span<std::byte> out) const {
  if (offset > image_.size() || image_.size() - offset < out.size()) {
    return make_error(ErrorKind::kNotFound,
                      fmt::format("{}: {} bytes at file offset 0x{:x} are past its end (size {})",
                                  path_, out.size(), offset, image_.size()));
  }
  if (!out.empty()) std::memcpy(out.data(), image_.data() + offset, out.size());
  // The file's own ELF header where open_by_segments showed libelf another.
  if (const auto& header = handles_->file_header; header && offset < sizeof *header && !out.empty()) {
    const size_t count = std::min<size_t>(out.size(), sizeof *header - offset);
    std::memcpy(out.data(), reinterpret_cast<const std::byte*>(&*header) + offset, count);
  }
  return {};
}

size_t ElfFile::patched_header_bytes() const { return handles_->file_header ? sizeof(Elf64_Ehdr) : 0; }

Elf* ElfFile::new_reference() const {
  if (handles_->fd < 0 || handles_->mapping != nullptr || (type_ != ET_EXEC && type_ != ET_DYN)) return nullptr;
  Elf* reference = elf_begin(handles_->fd, ELF_C_READ_MMAP, handles_->elf);
  if (reference == handles_->elf) return reference;
  if (reference != nullptr) elf_end(reference);  // not the same descriptor: nothing shared
  return nullptr;
}

Expected<void> ElfFile::read_file_offset_unmapped(uint64_t offset, std::span<std::byte> out) const {
  if (handles_->fd < 0) return read_file_offset(offset, out);  // an image held in memory
  if (offset > image_.size() || image_.size() - offset < out.size()) {
    return read_file_offset(offset, out);  // the same error
  }
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t count = ::pread(handles_->fd, out.data() + done, out.size() - done,
                                  static_cast<off_t>(offset + done));
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) {
      return make_error(ErrorKind::kIo,
                        fmt::format("{}: cannot read {} bytes at file offset 0x{:x}: {}", path_,
                                    out.size() - done, offset + done,
                                    count < 0 ? std::strerror(errno) : "end of file"));
    }
    done += static_cast<size_t>(count);
  }
  return {};
}

}  // namespace hangpy::symbols
