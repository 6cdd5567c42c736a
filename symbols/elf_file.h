// An ELF file (executable, shared object, separate debug file or core) opened read-only through
// libelf. The file is memory-mapped by libelf, never read whole; every offset, size and count
// taken from the file is bounds-checked, so a truncated or corrupt file yields errors or empty
// results, never a crash.
//
// Ownership: an ElfFile owns its file descriptor, its libelf handle (and so the mapping) and,
// for images built from memory, the image buffer. Spans it hands out (ElfNote::desc) point into
// that mapping and stay valid as long as the ElfFile lives.
//
// Thread safety: const methods may be called concurrently (the lazily built symbol indexes are
// built under std::call_once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

typedef struct Elf Elf;  // libelf.h

namespace hangpy::symbols {

struct LoadSegment {
  uint64_t vaddr = 0;
  uint64_t memsz = 0;
  uint64_t file_offset = 0;
  uint64_t filesz = 0;
  uint32_t flags = 0;  // PF_R | PF_W | PF_X
};

struct Symbol {
  std::string name;
  uint64_t value = 0;  // link-time virtual address (add the module's load bias for runtime)
  uint64_t size = 0;
  unsigned char type = 0;  // STT_*
};

struct ElfNote {
  std::string name;  // owner, without the terminating NUL ("GNU", "CORE", "LINUX")
  uint32_t type = 0;
  std::span<const std::byte> desc;  // points into the ElfFile's image
};

class ElfFile {
 public:
  // Errors: kIo (cannot open or map; the message names the path and the system error),
  // kInvalidInput (empty file, not an ELF file, unreadable ELF header).
  static Expected<std::unique_ptr<ElfFile>> open(const std::string& path);

  // A file read by its program headers alone (a core): libelf is not shown the section header
  // table, so that it sets up nothing for each section (gdb's gcore writes one per segment, a
  // thousand for a torch process: ~60 pages faulted in for nothing). Reads of the file's bytes
  // give the file as it is. A file whose program header count lives in its section 0 (PN_XNUM)
  // or that has no program headers is opened as open() does.
  static Expected<std::unique_ptr<ElfFile>> open_by_segments(const std::string& path);

  // An ELF image held in memory, e.g. the first pages of a mapping read from a core. `name`
  // only labels messages. The image may be cut short; what lies past its end is simply absent.
  static Expected<std::unique_ptr<ElfFile>> from_image(std::vector<std::byte> image,
                                                       std::string name);
  // The same over bytes the caller keeps, unchanged, for as long as the ElfFile lives: a core's
  // ~300 module headers are read through one buffer, not a fresh zeroed page each.
  static Expected<std::unique_ptr<ElfFile>> from_borrowed_image(std::span<std::byte> image,
                                                                std::string name);

  ~ElfFile();
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  const std::string& path() const { return path_; }
  uint16_t type() const { return type_; }        // ET_*
  uint16_t machine() const { return machine_; }  // EM_*
  uint64_t file_size() const { return image_.size(); }
  // Lowercase hex of the NT_GNU_BUILD_ID note, if the file has one.
  const std::optional<std::string>& build_id() const { return build_id_; }
  // PT_LOAD program headers in file order; filesz is clamped to memsz.
  const std::vector<LoadSegment>& load_segments() const { return load_segments_; }

  // Where the last PT_NOTE segment ends in the file (0 without one): past the file's size, the
  // file was cut (gdb's gcore writes its notes after the memory).
  uint64_t notes_end() const { return notes_end_; }
  // After notes(): why the notes were not read to their end (a corrupt note), when they were not.
  const std::optional<std::string>& corrupt_notes() const { return corrupt_notes_; }
  // The DT_NEEDED names of its dynamic section, in order, and its DT_RUNPATH (else DT_RPATH),
  // unexpanded; both empty for a file without a dynamic section. At most 64 names.
  struct Dependencies {
    std::vector<std::string> needed;
    std::string run_path;
  };
  Dependencies dependencies() const;

  // The notes of every PT_NOTE segment (for files without program headers: SHT_NOTE sections).
  // Errors: kCorrupt when a note segment lies outside the file.
  Expected<std::vector<ElfNote>> notes() const;

  // A defined symbol by exact name: .dynsym (through .gnu.hash when present), then .symtab.
  // When several .symtab entries share a name, a global one wins over a local one.
  std::optional<Symbol> find_symbol(std::string_view name) const;
  // The function or object symbol whose [value, value + size) contains vaddr.
  std::optional<Symbol> symbol_at(uint64_t vaddr) const;
  // The link-time address of an allocated section (SHF_ALLOC) named `name`, such as the debug
  // offsets CPython modules publish in sections of their own (.AsyncioDebug).
  std::optional<uint64_t> section_address(std::string_view name) const;

  // The file bytes behind a link-time virtual address. Errors: kNotFound when the range is not
  // inside one PT_LOAD's file-backed part (.bss, gaps), kCorrupt when the file is too short.
  Expected<void> read_vaddr(uint64_t vaddr, std::span<std::byte> out) const;
  // Raw bytes of the file. Errors: kNotFound when the range goes past the end of the file.
  Expected<void> read_file_offset(uint64_t offset, std::span<std::byte> out) const;
  // The same bytes, copied by pread(2) rather than from the mapping: cheaper for pages read once
  // and scattered over a large file, since touching a mapped page faults in its neighbours too and
  // they all have to be unmapped again. Errors: as read_file_offset, and kIo when pread fails.
  Expected<void> read_file_offset_unmapped(uint64_t offset, std::span<std::byte> out) const;
  // The mapping read_file_offset copies from, and how many of its first bytes are not the file's
  // (the ELF header libelf was shown where open_by_segments patched it; read_file_offset gives the
  // file's own there).
  std::span<const std::byte> mapped_bytes() const { return image_; }
  size_t patched_header_bytes() const;

  // libelf's descriptor of a file opened by open(), as one more reference for another reader
  // (libdwfl) to end with elf_end: libelf counts the references and keeps the mapping until the
  // last is ended. nullptr for images, files opened by segments and files libdwfl would write
  // to (relocatable objects, whose sections it relocates in place: this mapping is read-only).
  Elf* new_reference() const;

 private:
  struct Handles;  // the libelf handle and what backs it (fd or owned buffer)
  struct SymbolTable;
  struct NamedSymbolIndex;
  struct AddressIndex;

  ElfFile(std::string path, std::unique_ptr<Handles> handles);
  static Expected<std::unique_ptr<ElfFile>> finish_open(std::string path,
                                                        std::unique_ptr<Handles> handles);
  // elf_memory over `image` (owned by `handles`, or borrowed), then finish_open; an empty image
  // or a libelf that does not start is an error.
  static Expected<std::unique_ptr<ElfFile>> open_image(std::span<std::byte> image, std::string name,
                                                       std::unique_ptr<Handles> handles);
  Expected<void> read_headers();
  std::optional<SymbolTable> symbol_table(uint32_t section_type) const;
  std::optional<Symbol> find_dynamic_symbol(std::string_view name) const;
  const NamedSymbolIndex& named_index() const;
  const AddressIndex& address_index() const;

  std::string path_;
  std::unique_ptr<Handles> handles_;
  std::span<const std::byte> image_;  // the whole file as mapped by libelf
  uint16_t type_ = 0;
  uint16_t machine_ = 0;
  std::optional<std::string> build_id_;
  std::vector<LoadSegment> load_segments_;
  uint64_t notes_end_ = 0;
  mutable std::optional<std::string> corrupt_notes_;

  mutable std::once_flag named_index_once_;
  mutable std::unique_ptr<NamedSymbolIndex> named_index_;
  mutable std::once_flag address_index_once_;
  mutable std::unique_ptr<AddressIndex> address_index_;
};

// Lowercase hex of raw bytes (build-ids are compared in this form).
std::string to_hex(std::span<const std::byte> bytes);

}  // namespace hangpy::symbols
