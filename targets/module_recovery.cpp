#include "targets/module_recovery.h"

#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "symbols/module_placement.h"

namespace hangpy::targets {
namespace {

// Bounds on what the process's memory claims: a real ELF file has a few dozen program headers
// and dynamic entries; a process a few thousand modules; paths are at most PATH_MAX.
constexpr uint16_t kMaxProgramHeaders = 128;
constexpr uint64_t kMaxProgramHeaderOffset = 64 * 1024;
constexpr uint64_t kMaxDynamicEntries = 1024;
constexpr size_t kMaxModules = 16384;
constexpr size_t kMaxPathLength = 4096;
// The auxiliary vector sits under the argument and environment strings at the top of the main
// stack; those rarely exceed a few hundred KB (the kernel caps them at a quarter of the stack
// limit), so the top MB of the stack is searched.
constexpr uint64_t kAuxvSearchBytes = 1 << 20;
constexpr uint64_t kMaxAuxvPairs = 128;
constexpr uint64_t kUserSpaceEnd = uint64_t{1} << 47;
constexpr size_t kMaxExecutableCandidates = 4;

// The search of the process's data for the executable's path: how much of it, how many paths.
constexpr uint64_t kMaxPathScanBytes = 128 << 20;
constexpr uint64_t kPathScanChunk = 1 << 20;
constexpr size_t kMaxPathCandidates = 32;
constexpr uint64_t kMaxNoteBytes = 4096;

// One ELF header found at the start of a segment, as the process mapped it.
struct FoundHeader {
  uint64_t address = 0;  // where file offset 0 is mapped
  uint64_t load_bias = 0;
  std::vector<std::pair<uint64_t, uint64_t>> notes;  // each PT_NOTE: its runtime address, size
  std::optional<uint64_t> dynamic;  // runtime address of PT_DYNAMIC
  bool has_interpreter = false;     // PT_INTERP: an executable (or glibc's libc.so.6)
  std::vector<Elf64_Phdr> loads;
  std::string path;  // "" until some source names it
};

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return symbols::align_down(value + alignment - 1, alignment);
}

std::optional<FoundHeader> read_header(const cpython::AddressSpace& memory, uint64_t address,
                                       uint64_t page_size) {
  auto header = cpython::read_value<Elf64_Ehdr>(memory, address);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != ELFCLASS64 ||
      (header->e_type != ET_EXEC && header->e_type != ET_DYN) ||
      header->e_phentsize != sizeof(Elf64_Phdr) || header->e_phnum == 0 ||
      header->e_phnum > kMaxProgramHeaders || header->e_phoff > kMaxProgramHeaderOffset) {
    return std::nullopt;
  }
  std::vector<Elf64_Phdr> headers(header->e_phnum);
  if (!memory.read(address + header->e_phoff, std::as_writable_bytes(std::span(headers))))
    return std::nullopt;
  FoundHeader found;
  found.address = address;
  std::optional<uint64_t> first_vaddr;
  std::optional<uint64_t> dynamic_vaddr;
  for (const Elf64_Phdr& phdr : headers) {
    if (phdr.p_type == PT_LOAD) {
      if (phdr.p_offset == 0 && !first_vaddr) first_vaddr = phdr.p_vaddr;
      found.loads.push_back(phdr);
    } else if (phdr.p_type == PT_DYNAMIC) {
      dynamic_vaddr = phdr.p_vaddr;
    } else if (phdr.p_type == PT_INTERP) {
      found.has_interpreter = true;
    } else if (phdr.p_type == PT_NOTE) {
      found.notes.emplace_back(phdr.p_vaddr, std::min<uint64_t>(phdr.p_memsz, kMaxNoteBytes));
    }
  }
  // File offset 0 must be mapped by some PT_LOAD for its header to be at `address`.
  if (!first_vaddr) return std::nullopt;
  found.load_bias = address - symbols::align_down(*first_vaddr, page_size);
  if (dynamic_vaddr) found.dynamic = found.load_bias + *dynamic_vaddr;
  for (auto& note : found.notes) note.first += found.load_bias;
  return found;
}

// The GNU build-id (hex) in one PT_NOTE segment of a module, where the core holds it.
std::optional<std::string> build_id_in(const cpython::AddressSpace& memory, uint64_t address, uint64_t size) {
  if (size < sizeof(Elf64_Nhdr)) return std::nullopt;
  std::vector<std::byte> notes(size);
  if (!memory.read(address, notes)) return std::nullopt;
  for (size_t at = 0; at + sizeof(Elf64_Nhdr) <= notes.size();) {
    Elf64_Nhdr note;
    std::memcpy(&note, notes.data() + at, sizeof(note));
    const size_t name_at = at + sizeof(note);
    const size_t desc_at = name_at + ((uint64_t{note.n_namesz} + 3) & ~uint64_t{3});
    const size_t end = desc_at + ((uint64_t{note.n_descsz} + 3) & ~uint64_t{3});
    if (note.n_namesz > kMaxNoteBytes || note.n_descsz > kMaxNoteBytes || end > notes.size()) break;
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
        std::memcmp(notes.data() + name_at, "GNU", 4) == 0 && note.n_descsz > 0) {
      std::string hex;
      for (size_t i = 0; i < note.n_descsz; ++i)
        hex += fmt::format("{:02x}", static_cast<unsigned>(notes[desc_at + i]));
      return hex;
    }
    at = end;
  }
  return std::nullopt;
}

// The GNU build-id (hex) in any of the module's PT_NOTE segments (.note.gnu.property often comes
// first).
std::optional<std::string> build_id_of(const cpython::AddressSpace& memory, const FoundHeader& header) {
  for (const auto& [address, size] : header.notes)
    if (auto found = build_id_in(memory, address, size)) return found;
  return std::nullopt;
}

bool path_byte(unsigned char c) { return c > 0x20 && c < 0x7f; }

// A path a Python executable may have: absolute, and its last part names python.
bool python_executable_path(const std::string& path) {
  if (path.size() < 2 || path.front() != '/' || path.size() > kMaxPathLength) return false;
  const std::string base = path.substr(path.rfind('/') + 1);
  return base.starts_with("python") && !base.ends_with(".py") && !base.ends_with(".so") &&
         base.find(".so.") == std::string::npos;
}

// Paths of Python executables in the process's writable data, in the order found, each once: as
// UTF-8 (argv[0], sys.executable's str) and as UTF-32 (the interpreter's wchar_t configuration).
std::vector<std::string> python_paths_in_data(const cpython::AddressSpace& memory,
                                              const std::vector<SegmentStart>& segments) {
  std::vector<const SegmentStart*> writable;
  for (const SegmentStart& segment : segments)
    if (segment.writable && segment.address < kUserSpaceEnd) writable.push_back(&segment);
  std::sort(writable.begin(), writable.end(), [](auto* a, auto* b) { return a->address < b->address; });
  static constexpr std::string_view kAscii = "python";
  static constexpr char kWide[] = "p\0\0\0y\0\0\0t\0\0\0h\0\0\0o\0\0\0n\0\0\0";
  const std::string_view wide(kWide, sizeof(kWide) - 1);
  std::vector<std::string> found;
  std::set<std::string> seen;
  auto add = [&](std::string path) {
    if (python_executable_path(path) && seen.insert(path).second) found.push_back(std::move(path));
  };
  uint64_t scanned = 0;
  std::vector<char> chunk;
  for (const SegmentStart* segment : writable) {
    for (uint64_t offset = 0; offset < segment->size && scanned < kMaxPathScanBytes &&
                              found.size() < kMaxPathCandidates;
         offset += kPathScanChunk) {
      const uint64_t size = std::min(kPathScanChunk, segment->size - offset);
      chunk.resize(size);
      scanned += size;
      if (!memory.read(segment->address + offset, std::as_writable_bytes(std::span(chunk)))) continue;
      const std::string_view text(chunk.data(), chunk.size());
      for (size_t at = text.find(kAscii); at != std::string_view::npos; at = text.find(kAscii, at + 1)) {
        size_t begin = at;
        while (begin > 0 && at - begin < kMaxPathLength && path_byte(static_cast<unsigned char>(text[begin - 1]))) --begin;
        size_t end = at;
        while (end < text.size() && end - begin < kMaxPathLength && path_byte(static_cast<unsigned char>(text[end]))) ++end;
        add(std::string(text.substr(begin, end - begin)));
      }
      for (size_t at = text.find(wide); at != std::string_view::npos; at = text.find(wide, at + 4)) {
        auto char_at = [&](size_t position) -> unsigned char {
          return text[position + 1] == 0 && text[position + 2] == 0 && text[position + 3] == 0
                     ? static_cast<unsigned char>(text[position]) : 0;
        };
        size_t begin = at;
        while (begin >= 4 && (at - begin) / 4 < kMaxPathLength && path_byte(char_at(begin - 4))) begin -= 4;
        std::string path;
        for (size_t position = begin; position + 4 <= text.size() && path.size() < kMaxPathLength &&
                                      path_byte(char_at(position));
             position += 4)
          path += static_cast<char>(char_at(position));
        add(std::move(path));
      }
    }
  }
  return found;
}

// The auxiliary vector's entries, found by their fixed middle (AT_PHDR, AT_PHENT = 56, AT_PHNUM)
// in the top of the highest writable segment below the kernel (the main thread's stack).
std::map<uint64_t, uint64_t> find_auxv(const cpython::AddressSpace& memory,
                                       const std::vector<SegmentStart>& segments) {
  const SegmentStart* stack = nullptr;
  for (const SegmentStart& segment : segments) {
    if (!segment.writable || segment.address >= kUserSpaceEnd) continue;
    if (!stack || segment.address > stack->address) stack = &segment;
  }
  if (!stack) return {};
  const uint64_t size = symbols::align_down(std::min(stack->size, kAuxvSearchBytes), 8);
  std::vector<uint64_t> words(size / 8);
  if (!memory.read(stack->address + stack->size - size, std::as_writable_bytes(std::span(words))))
    return {};
  for (size_t i = 0; i + 5 < words.size(); i += 1) {
    if (words[i] != AT_PHDR || words[i + 2] != AT_PHENT || words[i + 3] != sizeof(Elf64_Phdr) ||
        words[i + 4] != AT_PHNUM)
      continue;
    // Back to the vector's first key (the word before it ends the environment: 0, no key), then
    // forward to AT_NULL.
    size_t first = i;
    while (first >= 2 && words[first - 2] > AT_NULL && words[first - 2] < 64 &&
           (i - first) / 2 < kMaxAuxvPairs)
      first -= 2;
    std::map<uint64_t, uint64_t> auxv;
    for (size_t at = first; at + 1 < words.size() && words[at] != AT_NULL &&
                            (at - first) / 2 < kMaxAuxvPairs;
         at += 2)
      auxv.emplace(words[at], words[at + 1]);
    return auxv;
  }
  return {};
}

// One module of the dynamic linker's list.
struct LinkedModule {
  uint64_t ld = 0;    // l_ld: its dynamic section
  uint64_t bias = 0;  // l_addr: its load bias
  std::string path;   // l_name ("" for the executable)
};

// The dynamic linker's list of loaded modules, through DT_DEBUG in the executable's dynamic
// section. Empty when any step is not in the core.
std::vector<LinkedModule> read_link_map(const cpython::AddressSpace& memory, uint64_t dynamic) {
  std::optional<uint64_t> debug;
  for (uint64_t i = 0; i < kMaxDynamicEntries; ++i) {
    auto entry = cpython::read_value<Elf64_Dyn>(memory, dynamic + i * sizeof(Elf64_Dyn));
    if (!entry || entry->d_tag == DT_NULL) break;
    if (entry->d_tag == DT_DEBUG) debug = entry->d_un.d_ptr;
  }
  std::vector<LinkedModule> modules;
  if (!debug || *debug == 0) return modules;
  auto map = cpython::read_pointer(memory, *debug + offsetof(r_debug, r_map));
  std::set<uint64_t> visited;
  for (uint64_t entry = map ? *map : 0; entry != 0 && modules.size() < kMaxModules;) {
    if (!visited.insert(entry).second) break;  // a cycle: corrupt memory
    auto name = cpython::read_pointer(memory, entry + offsetof(link_map, l_name));
    auto ld = cpython::read_pointer(memory, entry + offsetof(link_map, l_ld));
    auto next = cpython::read_pointer(memory, entry + offsetof(link_map, l_next));
    auto bias = cpython::read_pointer(memory, entry + offsetof(link_map, l_addr));
    if (!name || !ld || !next || !bias) break;
    std::string path;
    if (*name != 0) {
      if (auto text = cpython::read_c_string(memory, *name, kMaxPathLength)) path = *text;
    }
    modules.push_back({*ld, *bias, std::move(path)});
    entry = *next;
  }
  return modules;
}

// Which header is the executable's: the one holding AT_PHDR; else the first module of the
// dynamic linker's list; else the lowest one with a PT_INTERP (executables load low, libraries
// under the stack).
FoundHeader* find_executable(std::vector<FoundHeader>& headers,
                             const std::map<uint64_t, uint64_t>& auxv,
                             const std::vector<LinkedModule>& link_map) {
  if (auto phdr = auxv.find(AT_PHDR); phdr != auxv.end()) {
    for (FoundHeader& header : headers) {
      for (const Elf64_Phdr& load : header.loads) {
        const uint64_t start = header.load_bias + load.p_vaddr;
        if (phdr->second >= start && phdr->second - start < load.p_memsz) return &header;
      }
    }
  }
  if (!link_map.empty()) {
    for (FoundHeader& header : headers)
      if (header.dynamic == link_map.front().ld) return &header;
  }
  for (FoundHeader& header : headers)
    if (header.has_interpreter) return &header;  // sorted by address
  return nullptr;
}

// The modules still unnamed that carry a build-id, matched with the libraries the executable
// needs: each candidate path's file is read once.
void name_needed_libraries(const cpython::AddressSpace& memory, std::vector<FoundHeader>& headers,
                           const std::string& executable, const FileFacts& files) {
  std::map<std::string, FoundHeader*> unnamed;  // build-id -> header
  for (FoundHeader& header : headers) {
    if (!header.path.empty()) continue;
    if (auto build_id = build_id_of(memory, header)) unnamed.emplace(*build_id, &header);
  }
  if (unnamed.empty()) return;
  for (const std::string& candidate : files.library_candidates(executable)) {
    const std::optional<std::string> build_id = files.build_id(candidate);
    if (!build_id) continue;
    auto found = unnamed.find(*build_id);
    if (found == unnamed.end()) continue;
    found->second->path = candidate;
    unnamed.erase(found);
    if (unnamed.empty()) return;
  }
}

// A file's first bytes standing where its offset 0 is mapped, so that read_header reads the
// header from there as it would from the process's memory.
class FileImage final : public cpython::AddressSpace {
 public:
  FileImage(uint64_t address, const std::vector<std::byte>& bytes) : address_(address), bytes_(bytes) {}
  Expected<void> read(uint64_t address, std::span<std::byte> out) const override {
    if (address < address_ || address - address_ > bytes_.size() ||
        bytes_.size() - (address - address_) < out.size())
      return make_error(ErrorKind::kUnmapped, "past the file's first bytes", address);
    std::memcpy(out.data(), bytes_.data() + (address - address_), out.size());
    return {};
  }

 private:
  uint64_t address_;
  const std::vector<std::byte>& bytes_;
};

// The modules' headers read from their files, for a core that saved none of them: the executable
// (--exe, else AT_EXECFN) at AT_PHDR minus its program headers' file offset, which leads to the
// dynamic linker's list (its l_addr places each library). Each file is read once; a module whose
// file is not here stays out.
std::vector<FoundHeader> headers_from_files(const cpython::AddressSpace& memory,
                                            const std::map<uint64_t, uint64_t>& auxv,
                                            const std::optional<std::string>& executable,
                                            uint64_t page_size, const FileFacts& files) {
  std::vector<FoundHeader> headers;
  const auto phdr = auxv.find(AT_PHDR);
  if (phdr == auxv.end()) return headers;
  std::string path = executable.value_or("");
  if (path.empty()) {
    if (auto execfn = auxv.find(AT_EXECFN); execfn != auxv.end()) {
      if (auto text = cpython::read_c_string(memory, execfn->second, kMaxPathLength)) path = *text;
    }
  }
  if (path.empty()) return headers;
  const std::optional<std::vector<std::byte>> start = files.file_start(path);
  if (!start) return headers;
  const auto file_header = cpython::read_value<Elf64_Ehdr>(FileImage(0, *start), 0);
  if (!file_header || file_header->e_phoff > phdr->second) return headers;
  const uint64_t address = phdr->second - file_header->e_phoff;
  auto main = read_header(FileImage(address, *start), address, page_size);
  if (!main || !main->dynamic) return headers;
  main->path = path;
  const std::vector<LinkedModule> link_map = read_link_map(memory, *main->dynamic);
  headers.push_back(std::move(*main));
  for (const LinkedModule& module : link_map) {
    if (module.path.empty() || module.path.front() != '/' || headers.size() >= kMaxModules) continue;
    const std::optional<std::vector<std::byte>> bytes = files.file_start(module.path);
    if (!bytes) continue;
    // Offset 0 of a library is mapped at its bias plus its first segment's (page-aligned) address.
    std::optional<FoundHeader> at_zero = read_header(FileImage(module.bias, *bytes), module.bias, page_size);
    if (!at_zero) continue;
    const uint64_t shift = module.bias - at_zero->load_bias;  // the first segment's address
    auto library = read_header(FileImage(module.bias + shift, *bytes), module.bias + shift, page_size);
    if (!library || library->load_bias != module.bias) continue;
    library->path = module.path;
    headers.push_back(std::move(*library));
  }
  std::sort(headers.begin(), headers.end(),
            [](const FoundHeader& a, const FoundHeader& b) { return a.address < b.address; });
  return headers;
}

}  // namespace

RecoveredModules recover_modules(const cpython::AddressSpace& memory,
                                 const std::vector<SegmentStart>& segments,
                                 const std::optional<std::string>& executable,
                                 const std::optional<std::string>& executable_hint,
                                 uint64_t page_size, const FileFacts& files,
                                 const std::vector<std::pair<uint64_t, uint64_t>>& noted_auxv) {
  RecoveredModules result;
  std::vector<FoundHeader> headers;
  for (const SegmentStart& segment : segments) {
    if (headers.size() >= kMaxModules) break;
    if (auto header = read_header(memory, segment.address, page_size))
      headers.push_back(std::move(*header));
  }
  std::sort(headers.begin(), headers.end(),
            [](const FoundHeader& a, const FoundHeader& b) { return a.address < b.address; });
  result.elf_headers = headers.size();

  const std::map<uint64_t, uint64_t> auxv =
      noted_auxv.empty() ? find_auxv(memory, segments) : std::map<uint64_t, uint64_t>(noted_auxv.begin(), noted_auxv.end());
  // No executable's header among them (qemu-user's cores save no text; the one header found may be
  // its vDSO's): the modules' headers come from their files, the vDSO's stays.
  const bool executable_seen = std::any_of(headers.begin(), headers.end(),
                                           [](const FoundHeader& header) { return header.has_interpreter; });
  if (!executable_seen && files.file_start) {
    std::vector<FoundHeader> from_files = headers_from_files(memory, auxv, executable, page_size, files);
    result.headers_from_files = !from_files.empty();
    for (FoundHeader& header : headers) {
      const bool known = std::any_of(from_files.begin(), from_files.end(),
                                     [&](const FoundHeader& file) { return file.address == header.address; });
      if (!known) from_files.push_back(std::move(header));
    }
    headers = std::move(from_files);
    std::sort(headers.begin(), headers.end(),
              [](const FoundHeader& a, const FoundHeader& b) { return a.address < b.address; });
  }
  // The executable's dynamic section leads to the list (the dynamic linker fills in DT_DEBUG of
  // the executable only). Which header is the executable is not known yet: the first few with a
  // PT_INTERP are tried (glibc's libc.so.6 has one too), a bounded cost on a corrupt core.
  std::vector<LinkedModule> link_map;
  size_t tried = 0;
  for (const FoundHeader& header : headers) {
    if (!header.has_interpreter || !header.dynamic) continue;
    if (tried++ == kMaxExecutableCandidates) break;
    link_map = read_link_map(memory, *header.dynamic);
    if (!link_map.empty()) break;
  }
  std::map<uint64_t, FoundHeader*> by_dynamic;
  for (FoundHeader& header : headers)
    if (header.dynamic) by_dynamic.emplace(*header.dynamic, &header);
  for (const LinkedModule& module : link_map) {
    if (module.path.empty() || module.path.front() != '/') continue;  // the executable (""), the vDSO
    if (auto found = by_dynamic.find(module.ld); found != by_dynamic.end() && found->second->path.empty())
      found->second->path = module.path;
  }
  if (FoundHeader* main = find_executable(headers, auxv, link_map)) {
    result.executable_start = main->address;
    if (executable) {
      main->path = *executable;
      result.executable_named_by = "--exe";
    } else if (auto execfn = auxv.find(AT_EXECFN); execfn != auxv.end()) {
      if (auto text = cpython::read_c_string(memory, execfn->second, kMaxPathLength);
          text && !text->empty()) {
        main->path = *text;
        result.executable_named_by = "AT_EXECFN";
      }
    }
    if (main->path.empty() && executable_hint) {
      main->path = *executable_hint;
      result.executable_named_by = "the path its wrapper recorded";
    }
    if (main->path.empty() && files.build_id) {
      if (const std::optional<std::string> build_id = build_id_of(memory, *main)) {
        for (const std::string& candidate : python_paths_in_data(memory, segments)) {
          if (files.build_id(candidate) != build_id) continue;
          main->path = candidate;
          result.executable_named_by = "a path in its memory whose file has its build-id";
          break;
        }
      }
    }
    if (!main->path.empty() && files.build_id && files.library_candidates)
      name_needed_libraries(memory, headers, main->path, files);
  }

  for (const FoundHeader& header : headers) {
    if (header.path.empty()) continue;
    ++result.named;
    for (const Elf64_Phdr& load : header.loads) {
      if (load.p_filesz == 0) continue;
      const uint64_t vaddr = header.load_bias + load.p_vaddr;
      FileMapping mapping{symbols::align_down(vaddr, page_size),
                          align_up(vaddr + load.p_filesz, page_size),
                          symbols::align_down(load.p_offset, page_size), header.path};
      if (mapping.end > mapping.start) result.mappings.push_back(std::move(mapping));
    }
  }
  std::sort(result.mappings.begin(), result.mappings.end(),
            [](const FileMapping& a, const FileMapping& b) { return a.start < b.start; });
  return result;
}

}  // namespace hangpy::targets
