// The files a process maps, one module per file however many pieces it is mapped in. Both
// targets group their mappings (a core's NT_FILE note, /proc/PID/maps) into this table once and
// answer the symbol questions through it (function_at, module_file, find_symbol, find_section);
// what differs between them is how a module's file is found and its load bias read, which they
// pass in.
#pragma once

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "symbols/elf_file.h"
#include "symbols/module_placement.h"

namespace hangpy::targets {

// Where one mapped file lies; a target's own module type derives from it and adds what it
// learns of the file (its saved ELF header, the file found on this machine).
struct ModuleSpan {
  std::string recorded_path;  // as the core or /proc/PID/maps names it
  uint64_t start = 0;         // the lowest start of its pieces
  uint64_t end = 0;           // the highest end of its pieces
  std::optional<uint64_t> header_address;  // where file offset 0 is mapped
  uint64_t header_mapping_end = 0;         // the end of that piece
};

// `Module` derives from ModuleSpan. The lookups take the target's two ways into a module:
//   file_of(const Module&) -> const symbols::ElfFile*   (nullptr when there is none)
//   load_bias(const Module&) -> uint64_t
template <typename Module>
class ModuleTable {
 public:
  // Adds one mapped piece of `path`; pieces of one path make one module. Returns its index.
  size_t add_mapping(const std::string& path, uint64_t start, uint64_t end, uint64_t file_offset) {
    // The pieces of one file come one after another (NT_FILE and /proc/PID/maps are in address
    // order): the last module added is asked first, without hashing the path (a torch rank maps
    // ~1,300 pieces of ~300 files).
    size_t index = last_added_;
    if (index >= modules_.size() || modules_[index].recorded_path != path) {
      auto [it, inserted] = index_by_path_.try_emplace(path, modules_.size());
      if (inserted) {
        modules_.push_back(Module{});
        modules_.back().recorded_path = path;
        modules_.back().start = start;
      }
      index = it->second;
      last_added_ = index;
    }
    Module& module = modules_[index];
    module.start = std::min(module.start, start);
    module.end = std::max(module.end, end);
    if (file_offset == 0 && !module.header_address) {
      module.header_address = start;
      module.header_mapping_end = end;
    }
    return index;
  }

  std::vector<Module>& modules() { return modules_; }
  // Room for `mappings` pieces (at most that many modules), before they are added.
  void reserve(size_t mappings) {
    modules_.reserve(mappings);
    index_by_path_.reserve(mappings);
  }
  const std::vector<Module>& modules() const { return modules_; }

  // The order symbols are looked up in: the executable first, then libpython, then the rest.
  void set_executable(std::optional<size_t> executable) {
    std::vector<std::string_view> paths;
    paths.reserve(modules_.size());
    for (const Module& module : modules_) paths.push_back(module.recorded_path);
    search_order_ = symbols::symbol_search_order(paths, executable);
  }
  const std::vector<size_t>& search_order() const { return search_order_; }

  // The function whose symbol (.symtab or .dynsym of the module mapped there) holds `pc`.
  template <typename FileOf, typename LoadBias>
  std::optional<std::string> function_at(uint64_t pc, FileOf file_of, LoadBias load_bias) const {
    for (const Module& module : modules_) {
      if (pc < module.start || pc >= module.end) continue;
      const symbols::ElfFile* file = file_of(module);
      if (file == nullptr) return std::nullopt;
      auto symbol = file->symbol_at(pc - load_bias(module));
      if (!symbol || symbol->type != STT_FUNC) return std::nullopt;
      return std::string(symbol->name);
    }
    return std::nullopt;
  }

  // The file behind the module recorded at `recorded_path` (nullptr: none), and its host path.
  template <typename FileOf>
  const symbols::ElfFile* module_elf_file(const std::string& recorded_path, FileOf file_of) const {
    auto it = index_by_path_.find(recorded_path);
    return it == index_by_path_.end() ? nullptr : file_of(modules_[it->second]);
  }
  template <typename FileOf>
  std::optional<std::string> module_file(const std::string& recorded_path, FileOf file_of) const {
    const symbols::ElfFile* file = module_elf_file(recorded_path, file_of);
    return file ? std::optional<std::string>(file->path()) : std::nullopt;
  }

  // A symbol's address in the first module of the search order that defines it.
  template <typename FileOf, typename LoadBias>
  std::optional<uint64_t> find_symbol(std::string_view name, FileOf file_of, LoadBias load_bias) const {
    for (size_t i : search_order_) {
      const symbols::ElfFile* file = file_of(modules_[i]);
      if (file == nullptr) continue;
      auto symbol = file->find_symbol(name);
      // A TLS symbol's value is an offset in the thread's block, not an address.
      if (symbol && symbol->type != STT_TLS) return symbol->value + load_bias(modules_[i]);
    }
    return std::nullopt;
  }

  template <typename FileOf, typename LoadBias>
  std::optional<uint64_t> find_section(std::string_view name, FileOf file_of, LoadBias load_bias) const {
    for (size_t i : search_order_) {
      const symbols::ElfFile* file = file_of(modules_[i]);
      if (file == nullptr) continue;
      if (auto address = file->section_address(name)) return *address + load_bias(modules_[i]);
    }
    return std::nullopt;
  }

 private:
  std::vector<Module> modules_;
  std::unordered_map<std::string, size_t> index_by_path_;
  size_t last_added_ = SIZE_MAX;  // the module add_mapping added a piece to last
  std::vector<size_t> search_order_;
};

}  // namespace hangpy::targets
