#include "coreanalyze/core_target.h"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "coreanalyze/core_file.h"
#include "symbols/elf_file.h"
#include "symbols/path_resolver.h"

namespace hangpy::coreanalyze {
namespace {

// How much of a module's first mapping we read from the core to see its ELF header, program
// headers and build-id note (they sit at the start of the file).
constexpr uint64_t kMaxHeaderImageBytes = 64 * 1024;
constexpr std::string_view kDeletedSuffix = " (deleted)";

// One file the core's NT_FILE note maps, possibly in several pieces.
struct Module {
  std::string recorded_path;
  uint64_t start = 0;
  uint64_t end = 0;
  std::optional<uint64_t> header_address;          // where file offset 0 is mapped
  std::unique_ptr<symbols::ElfFile> header_image;  // its first pages as saved in the core
  std::unique_ptr<symbols::ElfFile> file;          // the file found on this machine
  bool is_elf = false;
  uint64_t load_bias = 0;
};

uint64_t align_down(uint64_t value, uint64_t alignment) { return value & ~(alignment - 1); }

bool looks_like_binary(const std::string& path) { return path.find(".so") != std::string::npos; }

// Memory of the core, falling back to the mapped files for pages the core left out.
class CoreMemory final : public cpython::AddressSpace {
 public:
  CoreMemory(const CoreFile& core,
             std::vector<std::pair<const FileMapping*, const Module*>> mappings)
      : core_(core), mappings_(std::move(mappings)) {}

  Expected<void> read(uint64_t address, std::span<std::byte> out) const override {
    size_t done = 0;
    while (done < out.size()) {
      auto ok = core_.read(address + done, out.subspan(done));
      if (ok) return {};
      const Error& error = ok.error();
      const bool missing = error.kind == ErrorKind::kNotSaved || error.kind == ErrorKind::kUnmapped;
      if (!missing || !error.address || *error.address < address + done) return ok;
      done = static_cast<size_t>(*error.address - address);  // the core filled up to the fault
      const size_t from_file = read_from_file(*error.address, out.subspan(done));
      if (from_file == 0) return ok;
      done += from_file;
    }
    return {};
  }

 private:
  // Reads what the mapped file holds at `address`, up to the end of its page; returns the byte
  // count, 0 when the file cannot stand in for the core there.
  size_t read_from_file(uint64_t address, std::span<std::byte> out) const {
    // A writable mapping may have been changed since it was loaded: the file is not its content.
    if (const CoreSegment* segment = core_.segment_containing(address);
        segment != nullptr && (segment->flags & PF_W) != 0) {
      return 0;
    }
    auto it =
        std::upper_bound(mappings_.begin(), mappings_.end(), address,
                         [](uint64_t a, const auto& entry) { return a < entry.first->start; });
    if (it == mappings_.begin()) return 0;
    const auto& [mapping, module] = *std::prev(it);
    if (address >= mapping->end || module->file == nullptr) return 0;
    const uint64_t page_size = core_.page_size();
    const uint64_t limit = std::min(mapping->end, align_down(address, page_size) + page_size);
    const size_t count = static_cast<size_t>(std::min<uint64_t>(out.size(), limit - address));
    if (mapping->file_page_offset > ~uint64_t{0} / page_size) return 0;
    const uint64_t file_offset = address - mapping->start + mapping->file_page_offset * page_size;
    if (!module->file->read_file_offset(file_offset, out.first(count))) return 0;
    return count;
  }

  const CoreFile& core_;
  std::vector<std::pair<const FileMapping*, const Module*>> mappings_;  // sorted by start
};

class CoreTargetImpl final : public CoreTarget {
 public:
  CoreTargetImpl(std::unique_ptr<CoreFile> core, const CoreOptions& options)
      : core_(std::move(core)), warnings_(core_->warnings()) {
    collect_modules();
    find_executable();
    open_module_files(options);
    memory_ = std::make_unique<CoreMemory>(*core_, sorted_mappings());
    fill_process_info();
  }

  const cpython::AddressSpace& memory() const override { return *memory_; }
  const ProcessInfo& process() const override { return process_; }
  const CoreFile& core() const override { return *core_; }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  std::vector<InputCause> causes() const override {
    std::vector<InputCause> found;
    if (core_->truncation()) found.push_back({InputCause::Kind::kTruncatedCore, *core_->truncation()});
    for (const std::string& mismatch : wrong_binaries_)
      found.push_back({InputCause::Kind::kWrongBinary, mismatch});
    if (missing_files_message_)
      found.push_back({InputCause::Kind::kMissingBinaries, *missing_files_message_});
    return found;
  }
  std::vector<std::string> opened_files() const override {
    std::vector<std::string> paths;
    for (const Module& module : modules_)
      if (module.file) paths.push_back(module.file->path());
    return paths;
  }

  std::optional<uint64_t> find_symbol(std::string_view name) const override {
    // A snapshot answers from the addresses it recorded: it needs none of the binaries.
    if (const auto& recorded = core_->snapshot_symbols()) {
      auto it = recorded->find(std::string(name));
      if (it != recorded->end()) return it->second;
      return std::nullopt;
    }
    for (const Module* module : search_order()) {
      if (module->file == nullptr) continue;
      auto symbol = module->file->find_symbol(name);
      // A TLS symbol's value is an offset in the thread's block, not an address.
      if (symbol && symbol->type != STT_TLS) return symbol->value + module->load_bias;
    }
    return std::nullopt;
  }

  std::vector<cpython::NativeThread> threads() const override {
    std::vector<cpython::NativeThread> result;
    for (const CoreThread& thread : core_->threads()) {
      const auto& regs = thread.registers;
      result.push_back({thread.lwp, regs.fs_base, regs.rip, regs.rsp});
    }
    return result;
  }

  std::vector<cpython::MemoryRange> writable_ranges() const override {
    std::vector<cpython::MemoryRange> ranges;
    for (const CoreSegment& segment : core_->segments()) {
      if (segment.flags & PF_W) ranges.push_back({segment.vaddr, segment.vaddr + segment.memsz});
    }
    return ranges;
  }

  std::vector<cpython::MappedModule> modules() const override {
    std::vector<cpython::MappedModule> result;
    for (const Module& module : modules_) {
      if (module.is_elf) {
        result.push_back({module.recorded_path, module.start, module.end, module.load_bias});
      }
    }
    return result;
  }

 private:
  void collect_modules();
  void find_executable();
  void open_module_files(const CoreOptions& options);
  void open_module_file(Module& module, const symbols::PathResolver& resolver,
                        const std::optional<std::string>& override_path);
  void read_header_image(Module& module) const;
  void compute_load_bias(Module& module) const;
  void fill_process_info();
  std::vector<std::pair<const FileMapping*, const Module*>> sorted_mappings() const;
  std::vector<const Module*> search_order() const;

  std::unique_ptr<CoreFile> core_;
  std::vector<std::string> warnings_;
  std::vector<std::string> missing_files_;
  std::optional<std::string> missing_files_message_;
  std::vector<std::string> wrong_binaries_;  // one line per build-id mismatch
  std::vector<Module> modules_;
  std::vector<size_t> module_of_mapping_;  // parallel to core_->file_mappings()
  std::optional<size_t> executable_;       // index into modules_
  std::unique_ptr<CoreMemory> memory_;
  ProcessInfo process_;
};

void CoreTargetImpl::collect_modules() {
  std::unordered_map<std::string, size_t> index_by_path;
  for (const FileMapping& mapping : core_->file_mappings()) {
    auto [it, inserted] = index_by_path.try_emplace(mapping.path, modules_.size());
    if (inserted) {
      modules_.push_back(Module{});
      modules_.back().recorded_path = mapping.path;
      modules_.back().start = mapping.start;
    }
    Module& module = modules_[it->second];
    module.start = std::min(module.start, mapping.start);
    module.end = std::max(module.end, mapping.end);
    if (mapping.file_page_offset == 0 && !module.header_address) {
      module.header_address = mapping.start;
    }
    module_of_mapping_.push_back(it->second);
  }
  for (Module& module : modules_) read_header_image(module);
}

void CoreTargetImpl::read_header_image(Module& module) const {
  if (!module.header_address) return;
  const uint64_t page_size = core_->page_size();
  std::vector<std::byte> image;
  std::vector<std::byte> page(page_size);
  // Page by page: the kernel usually saves only the first page of an unmodified ELF mapping.
  while (image.size() < kMaxHeaderImageBytes &&
         core_->read(*module.header_address + image.size(), page)) {
    image.insert(image.end(), page.begin(), page.end());
  }
  if (image.size() < 4 || std::memcmp(image.data(), ELFMAG, SELFMAG) != 0) return;
  if (auto elf = symbols::ElfFile::from_image(std::move(image), module.recorded_path)) {
    module.header_image = std::move(*elf);
  }
}

void CoreTargetImpl::find_executable() {
  if (auto entry = core_->auxv_value(AT_ENTRY)) {
    for (size_t i = 0; i < modules_.size(); ++i) {
      if (*entry >= modules_[i].start && *entry < modules_[i].end) {
        executable_ = i;
        return;
      }
    }
  }
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (core_->execfn() && modules_[i].recorded_path == *core_->execfn()) {
      executable_ = i;
      return;
    }
  }
  // pr_fname is the executable's base name cut to 15 characters.
  if (core_->command().empty()) return;
  for (size_t i = 0; i < modules_.size(); ++i) {
    const std::string base = std::filesystem::path(modules_[i].recorded_path).filename().string();
    if (base.starts_with(core_->command())) {
      executable_ = i;
      return;
    }
  }
}

void CoreTargetImpl::open_module_files(const CoreOptions& options) {
  if (core_->snapshot_symbols()) {
    // A snapshot holds every page its analysis read: the files are neither needed nor looked up.
    for (Module& module : modules_) module.is_elf = true;
    return;
  }
  const symbols::PathResolver resolver(options.sysroot, options.lib_paths);
  if (options.executable && !executable_) {
    warnings_.push_back(fmt::format(
        "cannot tell which mapped file is the executable; {} is not used", *options.executable));
  }
  for (size_t i = 0; i < modules_.size(); ++i) {
    const bool is_executable = executable_ == i;
    open_module_file(modules_[i], resolver,
                     is_executable ? options.executable : std::optional<std::string>{});
    compute_load_bias(modules_[i]);
  }
  // One line for every missing file, so that a core from another machine warns once.
  if (!missing_files_.empty()) {
    std::string list = missing_files_.front();
    for (size_t i = 1; i < missing_files_.size() && i < 3; ++i) list += ", " + missing_files_[i];
    if (missing_files_.size() > 3) list += fmt::format(" and {} more", missing_files_.size() - 3);
    missing_files_message_ = fmt::format("cannot find {} (use --sysroot or --lib-path)", list);
    warnings_.push_back(*missing_files_message_);
  }
}

void CoreTargetImpl::open_module_file(Module& module, const symbols::PathResolver& resolver,
                                      const std::optional<std::string>& override_path) {
  std::string lookup_path = module.recorded_path;
  if (lookup_path.ends_with(kDeletedSuffix))
    lookup_path.resize(lookup_path.size() - kDeletedSuffix.size());
  const std::optional<std::string> core_build_id =
      module.header_image ? module.header_image->build_id() : std::nullopt;
  const bool known_elf = module.header_image != nullptr;

  std::optional<std::string> found = override_path;
  if (!found) found = resolver.resolve(lookup_path, core_build_id);
  // Nothing matches the build-id: take a file of the right name anyway and warn below.
  if (!found && core_build_id) found = resolver.resolve(lookup_path);
  if (!found) {
    if (known_elf || looks_like_binary(lookup_path)) {
      missing_files_.push_back(lookup_path);
    }
    module.is_elf = known_elf;
    return;
  }
  auto file = symbols::ElfFile::open(*found);
  if (!file) {
    // A data file mapped by the process (locale archive, shared memory) is no module.
    if (known_elf || override_path) warnings_.push_back(file.error().message);
    module.is_elf = known_elf;
    return;
  }
  module.file = std::move(*file);
  module.is_elf = true;
  const auto& file_build_id = module.file->build_id();
  if (core_build_id && file_build_id && *core_build_id != *file_build_id) {
    wrong_binaries_.push_back(fmt::format("the build-id of {} is {}, the core wants {} (for {})",
                                          *found, *file_build_id, *core_build_id,
                                          module.recorded_path));
    warnings_.push_back(wrong_binaries_.back());
  }
}

void CoreTargetImpl::compute_load_bias(Module& module) const {
  if (!module.is_elf || !module.header_address) return;
  const symbols::ElfFile* elf = module.file ? module.file.get() : module.header_image.get();
  if (elf == nullptr) return;
  const uint64_t page_size = core_->page_size();
  for (const symbols::LoadSegment& segment : elf->load_segments()) {
    if (align_down(segment.file_offset, page_size) == 0) {
      module.load_bias = *module.header_address - align_down(segment.vaddr, page_size);
      return;
    }
  }
}

std::vector<std::pair<const FileMapping*, const Module*>> CoreTargetImpl::sorted_mappings() const {
  std::vector<std::pair<const FileMapping*, const Module*>> result;
  const auto& mappings = core_->file_mappings();
  for (size_t i = 0; i < mappings.size(); ++i) {
    result.emplace_back(&mappings[i], &modules_[module_of_mapping_[i]]);
  }
  std::sort(result.begin(), result.end(),
            [](const auto& a, const auto& b) { return a.first->start < b.first->start; });
  return result;
}

std::vector<const Module*> CoreTargetImpl::search_order() const {
  std::vector<const Module*> order;
  if (executable_) order.push_back(&modules_[*executable_]);
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (executable_ != i) order.push_back(&modules_[i]);
  }
  return order;
}

void CoreTargetImpl::fill_process_info() {
  const auto& threads = core_->threads();
  process_.pid = core_->pid().value_or(threads.empty() ? 0 : threads.front().lwp);
  process_.command = core_->command();
  process_.arguments = core_->arguments();
  process_.signal = core_->signal();
  if (!process_.signal && !threads.empty() && threads.front().current_signal != 0) {
    process_.signal = threads.front().current_signal;
  }
  if (executable_) {
    process_.executable = modules_[*executable_].recorded_path;
  } else if (core_->execfn()) {
    process_.executable = *core_->execfn();
  }
}

}  // namespace

Expected<std::unique_ptr<CoreTarget>> CoreTarget::open(const CoreOptions& options) {
  auto core = CoreFile::open(options.core_path);
  if (!core) return std::unexpected(core.error());
  return std::make_unique<CoreTargetImpl>(std::move(*core), options);
}

}  // namespace hangpy::coreanalyze
