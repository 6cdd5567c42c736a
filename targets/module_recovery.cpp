#include "targets/module_recovery.h"

#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "symbols/module_placement.h"

namespace hangpy::coreanalyze {
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

// One ELF header found at the start of a segment, as the process mapped it.
struct FoundHeader {
  uint64_t address = 0;  // where file offset 0 is mapped
  uint64_t load_bias = 0;
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
    }
  }
  // File offset 0 must be mapped by some PT_LOAD for its header to be at `address`.
  if (!first_vaddr) return std::nullopt;
  found.load_bias = address - symbols::align_down(*first_vaddr, page_size);
  if (dynamic_vaddr) found.dynamic = found.load_bias + *dynamic_vaddr;
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

// The dynamic linker's list of loaded modules: (l_ld, l_name) of each, through DT_DEBUG in the
// executable's dynamic section. Empty when any step is not in the core.
std::vector<std::pair<uint64_t, std::string>> read_link_map(const cpython::AddressSpace& memory,
                                                            uint64_t dynamic) {
  std::optional<uint64_t> debug;
  for (uint64_t i = 0; i < kMaxDynamicEntries; ++i) {
    auto entry = cpython::read_value<Elf64_Dyn>(memory, dynamic + i * sizeof(Elf64_Dyn));
    if (!entry || entry->d_tag == DT_NULL) break;
    if (entry->d_tag == DT_DEBUG) debug = entry->d_un.d_ptr;
  }
  std::vector<std::pair<uint64_t, std::string>> modules;
  if (!debug || *debug == 0) return modules;
  auto map = cpython::read_pointer(memory, *debug + offsetof(r_debug, r_map));
  std::set<uint64_t> visited;
  for (uint64_t entry = map ? *map : 0; entry != 0 && modules.size() < kMaxModules;) {
    if (!visited.insert(entry).second) break;  // a cycle: corrupt memory
    auto name = cpython::read_pointer(memory, entry + offsetof(link_map, l_name));
    auto ld = cpython::read_pointer(memory, entry + offsetof(link_map, l_ld));
    auto next = cpython::read_pointer(memory, entry + offsetof(link_map, l_next));
    if (!name || !ld || !next) break;
    std::string path;
    if (*name != 0) {
      if (auto text = cpython::read_c_string(memory, *name, kMaxPathLength)) path = *text;
    }
    modules.emplace_back(*ld, std::move(path));
    entry = *next;
  }
  return modules;
}

// Which header is the executable's: the one holding AT_PHDR; else the first module of the
// dynamic linker's list; else the lowest one with a PT_INTERP (executables load low, libraries
// under the stack).
FoundHeader* find_executable(std::vector<FoundHeader>& headers,
                             const std::map<uint64_t, uint64_t>& auxv,
                             const std::vector<std::pair<uint64_t, std::string>>& link_map) {
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
      if (header.dynamic == link_map.front().first) return &header;
  }
  for (FoundHeader& header : headers)
    if (header.has_interpreter) return &header;  // sorted by address
  return nullptr;
}

}  // namespace

RecoveredModules recover_modules(const cpython::AddressSpace& memory,
                                 const std::vector<SegmentStart>& segments,
                                 const std::optional<std::string>& executable,
                                 const std::optional<std::string>& executable_hint,
                                 uint64_t page_size) {
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

  const std::map<uint64_t, uint64_t> auxv = find_auxv(memory, segments);
  // The executable's dynamic section leads to the list (the dynamic linker fills in DT_DEBUG of
  // the executable only). Which header is the executable is not known yet: the first few with a
  // PT_INTERP are tried (glibc's libc.so.6 has one too), a bounded cost on a corrupt core.
  std::vector<std::pair<uint64_t, std::string>> link_map;
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
  for (const auto& [ld, path] : link_map) {
    if (path.empty() || path.front() != '/') continue;  // the executable (""), the vDSO
    if (auto found = by_dynamic.find(ld); found != by_dynamic.end() && found->second->path.empty())
      found->second->path = path;
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

}  // namespace hangpy::coreanalyze
