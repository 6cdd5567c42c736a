#include "targets/core_target.h"

#include "cpython/recording_target.h"

#include <unistd.h>

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "targets/core_file.h"
#include "targets/module_recovery.h"
#include "targets/module_table.h"
#include "targets/proc_maps.h"
#include "cpython/recording_target.h"
#include "targets/zeroed_stacks.h"
#include "symbols/elf_file.h"
#include "symbols/elf_header_image.h"
#include "symbols/module_placement.h"
#include "symbols/debuginfod_fetch.h"
#include "symbols/dependencies.h"
#include "symbols/path_resolver.h"

namespace hangpy::targets {
namespace {

// How much of a module's first mapping we read from the core to see its ELF header, program
// headers and build-id note (they sit at the start of the file, nearly always in its first page).
constexpr uint64_t kMaxHeaderImageBytes = 64 * 1024;
constexpr uint64_t kHeaderProbeBytes = 1024;  // read first (read_saved_header)
constexpr std::string_view kDeletedSuffix = " (deleted)";

// What the ELF header the core saved at the start of a module's mapping says.
struct SavedHeader {
  std::optional<std::string> build_id;
  std::vector<symbols::LoadSegment> load_segments;
};

// One file the core's NT_FILE note maps, possibly in several pieces.
struct Module : ModuleSpan {
  std::optional<SavedHeader> saved_header;   // absent when the core holds no ELF header there
  std::optional<std::string> override_path;  // --exe, for the executable
  // The file found on this machine, looked up on first need (ModuleFiles::file).
  mutable bool looked_up = false;
  mutable std::unique_ptr<symbols::ElfFile> file;
};


bool looks_like_binary(const std::string& path) { return path.find(".so") != std::string::npos; }

std::string lookup_path(const Module& module) {
  std::string path = module.recorded_path;
  if (path.ends_with(kDeletedSuffix)) path.resize(path.size() - kDeletedSuffix.size());
  return path;
}

// Where an ELF64 image's program header table ends (e_phoff + e_phentsize * e_phnum); the
// largest value when the image is too short to say.
uint64_t program_headers_end(std::span<const std::byte> image) {
  Elf64_Ehdr header;
  if (image.size() < sizeof header) return ~uint64_t{0};
  std::memcpy(&header, image.data(), sizeof header);
  if (header.e_phoff > ~uint64_t{0} - uint64_t{header.e_phentsize} * header.e_phnum) {
    return ~uint64_t{0};
  }
  return header.e_phoff + uint64_t{header.e_phentsize} * header.e_phnum;
}

// The debuginfod client when DEBUGINFOD_URLS asks for one; a warning when it cannot start.
std::unique_ptr<symbols::DebuginfodFetch> start_debuginfod(std::vector<std::string>& warnings) {
  std::string why_not;
  std::unique_ptr<symbols::DebuginfodFetch> fetch = symbols::DebuginfodFetch::from_environment(why_not);
  if (!why_not.empty()) warnings.push_back(why_not);
  return fetch;
}

// The files behind the modules, found on this machine and opened on first need: a PyTorch
// process maps some 300 files, and an analysis reads from a handful of them.
class ModuleFiles {
 public:
  // `enabled` false (a snapshot core): no file is ever looked up.
  ModuleFiles(symbols::PathResolver resolver, bool enabled, std::vector<std::string>& warnings)
      : resolver_(std::move(resolver)),
        enabled_(enabled),
        warnings_(warnings),
        debuginfod_(enabled ? start_debuginfod(warnings) : nullptr) {}

  // The module's file, or nullptr when it is missing or not an ELF file. The first call looks it
  // up (by build-id when the core saved one) and may add a warning (unreadable file, build-id
  // mismatch).
  const symbols::ElfFile* file(const Module& module) const {
    std::lock_guard lock(mutex_);
    if (!enabled_ || module.looked_up) return module.file.get();
    module.looked_up = true;
    const std::string path = lookup_path(module);
    const std::optional<std::string> core_build_id =
        module.saved_header ? module.saved_header->build_id : std::nullopt;
    std::optional<std::string> found = module.override_path;
    std::unique_ptr<symbols::ElfFile> opened;  // the file resolve() read the build-id of
    if (!found) found = resolver_.resolve(path, core_build_id, &opened);
    // The last source: debuginfod, by the build-id the core recorded (checked again on opening).
    bool fetched_wrong_file = false;
    if (!found && core_build_id)
      found = fetch_from_debuginfod(module, *core_build_id, fetched_wrong_file);
    // Nothing matches the build-id: take a file of the right name anyway and warn below.
    if (!found && core_build_id) found = resolver_.resolve(path);
    if (!found) {
      // exists() deferred this module to debuginfod, which did not have it either.
      if (deferred_to_debuginfod(module)) {
        late_missing_.push_back(
            fetched_wrong_file ? path + " (debuginfod's copy has another build-id; not used)" : path);
      }
      return nullptr;  // otherwise reported by exists() for the whole core at once
    }
    if (opened) {
      module.file = std::move(opened);
    } else {
      auto file = symbols::ElfFile::open(*found);
      if (!file) {
        // A data file mapped by the process (locale archive, shared memory) is no module.
        if (module.saved_header || module.override_path) warnings_.push_back(file.error().message);
        return nullptr;
      }
      module.file = std::move(*file);
    }
    const auto& file_build_id = module.file->build_id();
    if (core_build_id && file_build_id && *core_build_id != *file_build_id) {
      wrong_binaries_.push_back(fmt::format("the build-id of {} is {}, the core wants {} (for {})",
                                            *found, *file_build_id, *core_build_id,
                                            module.recorded_path));
      warnings_.push_back(wrong_binaries_.back());
    }
    return module.file.get();
  }

  // One line per file opened so far whose build-id is not the one the core recorded.
  std::vector<std::string> wrong_binaries() const {
    std::lock_guard lock(mutex_);
    return wrong_binaries_;
  }

  // Whether some file stands for the module here (a stat per candidate path, nothing opened).
  // Call before file(); a module found missing is not looked up again.
  bool exists(const Module& module) const {
    std::lock_guard lock(mutex_);
    if (!enabled_ || module.override_path || module.looked_up) return true;
    // The recorded path itself where it needs no " (deleted)" taken off (no copy of it made: a
    // ?: of the two would copy it).
    const bool found = module.recorded_path.ends_with(kDeletedSuffix) ? resolver_.finds(lookup_path(module))
                                                                       : resolver_.finds(module.recorded_path);
    if (found) return true;
    // Fetched only when a read or a symbol lookup needs it (file() reports a failure).
    if (deferred_to_debuginfod(module)) return true;
    module.looked_up = true;
    return false;
  }

  // Files neither found here nor fetched from debuginfod when first needed ("" when none).
  std::string late_missing() const {
    std::lock_guard lock(mutex_);
    std::string list;
    for (const std::string& path : late_missing_) list += (list.empty() ? "" : ", ") + path;
    return list;
  }

 private:
  bool deferred_to_debuginfod(const Module& module) const {
    return debuginfod_ && !module.override_path && module.saved_header &&
           module.saved_header->build_id;
  }

  // The cached file debuginfod serves for the build-id, with a one-line note; never a file whose
  // own build-id differs (a server may be wrong, or a cache stale).
  std::optional<std::string> fetch_from_debuginfod(const Module& module, const std::string& build_id,
                                                   bool& fetched_wrong_file) const {
    if (!debuginfod_) return std::nullopt;
    std::string error;
    std::optional<std::string> fetched = debuginfod_->fetch_executable(build_id, error);
    if (!fetched) {
      warnings_.push_back(fmt::format("cannot fetch {} (build-id {}): {}", module.recorded_path,
                                      build_id, error));
      return std::nullopt;
    }
    auto file = symbols::ElfFile::open(*fetched);
    if (!file || (*file)->build_id() != build_id) {
      fetched_wrong_file = true;
      warnings_.push_back(fmt::format("debuginfod gave {} for {}, whose build-id is not {}; not used",
                                      *fetched, module.recorded_path, build_id));
      return std::nullopt;
    }
    warnings_.push_back(
        fmt::format("note: {} fetched from debuginfod as {}", module.recorded_path, *fetched));
    return fetched;
  }

  const symbols::PathResolver resolver_;
  const bool enabled_;
  std::vector<std::string>& warnings_;
  const std::unique_ptr<symbols::DebuginfodFetch> debuginfod_;
  mutable std::vector<std::string> late_missing_;
  mutable std::vector<std::string> wrong_binaries_;
  mutable std::mutex mutex_;
};

// Memory of the core, falling back to the mapped files for pages the core left out.
class CoreMemory final : public cpython::AddressSpace {
 public:
  CoreMemory(const CoreFile& core, const ModuleFiles& files,
             std::vector<std::pair<const FileMapping*, const Module*>> mappings)
      : core_(core), files_(files), mappings_(std::move(mappings)) {}

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
    if (address >= mapping->end) return 0;
    const symbols::ElfFile* file = files_.file(*module);
    if (file == nullptr) return 0;
    const uint64_t page_size = core_.page_size();
    const uint64_t limit = std::min(mapping->end, symbols::align_down(address, page_size) + page_size);
    const size_t count = static_cast<size_t>(std::min<uint64_t>(out.size(), limit - address));
    const uint64_t file_offset = address - mapping->start + mapping->file_offset;
    if (file_offset < mapping->file_offset) return 0;  // past 2^64
    if (!file->read_file_offset(file_offset, out.first(count))) return 0;
    return count;
  }

  const CoreFile& core_;
  const ModuleFiles& files_;
  std::vector<std::pair<const FileMapping*, const Module*>> mappings_;  // sorted by start
};

class CoreTargetImpl final : public CoreTarget {
  // The two ways into a module that the module table's lookups take (defined first: their
  // return types are deduced).
  auto file_of() const {
    return [this](const Module& module) { return files_.file(module); };
  }
  auto bias_of() const {
    return [this](const Module& module) { return load_bias(module); };
  }

 public:
  // `executable_start`: where the executable's ELF header is mapped, when module recovery found
  // it (a core without NT_FILE).
  CoreTargetImpl(std::unique_ptr<CoreFile> core, const CoreOptions& options,
                 std::optional<uint64_t> executable_start)
      : core_(std::move(core)),
        recovered_executable_start_(executable_start),
        snapshot_(core_->snapshot_symbols().has_value()),
        warnings_(core_->warnings()),
        files_(symbols::PathResolver(options.sysroot, options.lib_paths), !snapshot_, warnings_),
        options_(options) {
    collect_modules();
    find_executable();
    table_.set_executable(executable_);
    if (!snapshot_) check_module_files(options);
    memory_ = std::make_unique<CoreMemory>(*core_, files_, sorted_mappings());
    fill_process_info();
    // A snapshot keeps only the bytes an analysis read: zeros elsewhere are no sign.
    if (!snapshot_)
      if (auto zeroed = zeroed_stacks_warning(*core_)) warnings_.push_back(std::move(*zeroed));
  }

  const cpython::AddressSpace& memory() const override { return *memory_; }
  const ProcessInfo& process() const override { return process_; }
  const CoreFile& core() const override { return *core_; }
  const CoreOptions& options() const override { return options_; }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  std::vector<InputCause> causes() const override {
    std::vector<InputCause> found;
    if (core_->truncation()) found.push_back({InputCause::Kind::kTruncatedCore, *core_->truncation()});
    if (core_->corruption()) found.push_back({InputCause::Kind::kCorruptCore, *core_->corruption()});
    for (std::string& mismatch : files_.wrong_binaries())
      found.push_back({InputCause::Kind::kWrongBinary, std::move(mismatch)});
    if (missing_files_message_)
      found.push_back({InputCause::Kind::kMissingBinaries, *missing_files_message_});
    if (const std::string late = files_.late_missing(); !late.empty())
      found.push_back({InputCause::Kind::kMissingBinaries,
                       fmt::format("cannot find {} here nor through debuginfod", late)});
    return found;
  }
  std::vector<std::string> opened_files() const override {
    std::vector<std::string> paths;
    for (const Module& module : table_.modules())
      if (module.file) paths.push_back(module.file->path());
    return paths;
  }

  std::optional<std::string> module_file(const std::string& recorded_path) const override {
    return table_.module_file(recorded_path, file_of());
  }
  const symbols::ElfFile* module_elf_file(const std::string& recorded_path) const override {
    return table_.module_elf_file(recorded_path, file_of());
  }

  std::optional<std::string> function_at(uint64_t pc) const override {
    return table_.function_at(pc, file_of(), bias_of());
  }

  std::optional<uint64_t> find_symbol(std::string_view name) const override {
    // A snapshot answers from the addresses it recorded: it needs none of the binaries.
    if (const auto& recorded = core_->snapshot_symbols()) {
      auto it = recorded->find(std::string(name));
      if (it != recorded->end()) return it->second;
      return std::nullopt;
    }
    return table_.find_symbol(name, file_of(), bias_of());
  }

  std::optional<uint64_t> find_section(std::string_view name) const override {
    if (const auto& recorded = core_->snapshot_symbols()) {
      auto it = recorded->find(cpython::RecordingTarget::section_key(name));
      if (it != recorded->end()) return it->second;
      return std::nullopt;
    }
    return table_.find_section(name, file_of(), bias_of());
  }

  std::vector<cpython::NativeThread> threads() const override {
    std::vector<cpython::NativeThread> result;
    for (const CoreThread& thread : core_->threads()) {
      cpython::NativeThread native = thread.registers.native_thread(thread.lwp, in_syscall(thread.registers));
      native.cpu_seconds = thread.cpu_seconds;
      // A snapshot of a container's process keeps its threads' ids in their namespace (its note).
      for (const cpython::NamespacePid& pid : core_->namespace_pids())
        if (pid.pid == thread.lwp && pid.namespace_pid != thread.lwp) native.namespace_lwp = pid.namespace_pid;
      result.push_back(native);
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
    // Made once: a core's modules do not change, and a torch rank's ~300 are asked for by the
    // version probe, the asyncio check, the unwinder and the report alike.
    std::call_once(modules_made_, [this] {
      modules_.reserve(table_.modules().size());
      for (const Module& module : table_.modules()) {
        // A snapshot keeps the mappings of the modules only, and no load biases.
        if (snapshot_) {
          modules_.push_back({module.recorded_path, module.start, module.end, 0});
        } else if (is_elf(module)) {
          modules_.push_back({module.recorded_path, module.start, module.end, load_bias(module)});
        }
      }
    });
    return modules_;
  }

 private:
  // Whether an aarch64 thread sits in a system call, which its registers do not say: the
  // instruction at its pc is `svc #0` (the kernel's cores and gcore: a call cut by the signal is
  // rewound to restart) or the one before it is (qemu's cores: the call is still running). An
  // x86-64 thread says so itself (orig_rax).
  bool in_syscall(const MachineRegisters& registers) const {
    if (registers.machine != cpython::Machine::kAarch64) return true;
    for (uint64_t at : {registers.pc(), registers.pc() - 4}) {
      std::array<std::byte, 4> code{};
      if (registers.pc() >= 4 && memory_->read(at, code) && is_aarch64_svc(code)) return true;
    }
    return false;
  }
  void collect_modules();
  void read_saved_header(Module& module, std::vector<std::byte>& buffer) const;
  void find_executable();
  void check_module_files(const CoreOptions& options);
  bool is_elf(const Module& module) const;
  uint64_t load_bias(const Module& module) const;
  void fill_process_info();
  std::vector<std::pair<const FileMapping*, const Module*>> sorted_mappings() const;

  std::unique_ptr<CoreFile> core_;
  const std::optional<uint64_t> recovered_executable_start_;
  const bool snapshot_;
  mutable std::vector<std::string> warnings_;  // ModuleFiles adds to it as files are opened
  std::optional<std::string> missing_files_message_;
  ModuleFiles files_;
  ModuleTable<Module> table_;
  std::vector<size_t> module_of_mapping_;  // parallel to core_->file_mappings()
  std::optional<size_t> executable_;       // index into table_.modules()
  std::unique_ptr<CoreMemory> memory_;
  mutable std::once_flag modules_made_;
  mutable std::vector<cpython::MappedModule> modules_;  // modules(), once made
  ProcessInfo process_;
  const CoreOptions options_;
};

void CoreTargetImpl::collect_modules() {
  module_of_mapping_.reserve(core_->file_mappings().size());
  table_.reserve(core_->file_mappings().size());
  for (const FileMapping& mapping : core_->file_mappings()) {
    module_of_mapping_.push_back(
        table_.add_mapping(mapping.path, mapping.start, mapping.end, mapping.file_offset));
  }
  // One buffer for every module's header: each ElfFile read from it is done with before the next.
  std::vector<std::byte> buffer;
  for (Module& module : table_.modules()) read_saved_header(module, buffer);
}

// The ELF header, program headers and build-id note normally fit in the first page; only when
// they do not is more read (up to kMaxHeaderImageBytes). Whole pages only: the kernel usually
// saves just the first page of an unmodified ELF mapping. The first kHeaderProbeBytes are read
// first: they hold it all in every module of a torch rank (316 of them), and its ~300 reads
// copied 4 KB each; where they do not (or libelf wants more), the page is read as before.
void CoreTargetImpl::read_saved_header(Module& module, std::vector<std::byte>& buffer) const {
  if (!module.header_address) return;
  const uint64_t page_size = core_->page_size();
  const uint64_t first_page = std::min(page_size, kMaxHeaderImageBytes);
  for (uint64_t wanted = std::min(kHeaderProbeBytes, first_page);;
       wanted = wanted < first_page ? first_page : kMaxHeaderImageBytes) {
    const bool probe = wanted < first_page;
    if (buffer.size() < wanted) buffer.resize(wanted);  // the 64 KB only for a module that needs it
    std::span<std::byte> image = std::span(buffer).first(wanted);
    if (auto ok = core_->read_once(*module.header_address, image); !ok) {
      const auto fault = ok.error().address.value_or(*module.header_address);
      if (probe) continue;  // told apart at the page, as before
      image = image.first(std::min<uint64_t>(image.size(), symbols::align_down(fault - *module.header_address, page_size)));
    }
    const bool cut_by_us = image.size() == wanted && wanted < kMaxHeaderImageBytes;
    if (image.size() < SELFMAG || std::memcmp(image.data(), ELFMAG, SELFMAG) != 0) return;
    const bool headers_fit = program_headers_end(image) <= image.size();
    // The plain case without libelf (symbols/elf_header_image.h): a page holds it all.
    if (auto facts = symbols::read_plain_header_image(image)) {
      if (cut_by_us && !facts->build_id) continue;  // it lies further on
      module.saved_header = SavedHeader{std::move(facts->build_id), std::move(facts->load_segments)};
      return;
    }
    auto elf = symbols::ElfFile::from_borrowed_image(image, module.recorded_path);
    if (!elf && probe) continue;
    if (!elf) return;
    if (cut_by_us && (!headers_fit || !(*elf)->build_id())) continue;  // they lie further on
    module.saved_header = SavedHeader{(*elf)->build_id(), (*elf)->load_segments()};
    return;
  }
}

void CoreTargetImpl::find_executable() {
  if (recovered_executable_start_) {
    for (size_t i = 0; i < table_.modules().size(); ++i) {
      if (table_.modules()[i].header_address == recovered_executable_start_) {
        executable_ = i;
        return;
      }
    }
  }
  if (auto entry = core_->auxv_value(AT_ENTRY)) {
    for (size_t i = 0; i < table_.modules().size(); ++i) {
      if (*entry >= table_.modules()[i].start && *entry < table_.modules()[i].end) {
        executable_ = i;
        return;
      }
    }
  }
  for (size_t i = 0; i < table_.modules().size(); ++i) {
    if (core_->execfn() && table_.modules()[i].recorded_path == *core_->execfn()) {
      executable_ = i;
      return;
    }
  }
  // pr_fname is the executable's base name cut to 15 characters.
  if (core_->command().empty()) return;
  for (size_t i = 0; i < table_.modules().size(); ++i) {
    const std::string base = symbols::base_name(table_.modules()[i].recorded_path);
    if (base.starts_with(core_->command())) {
      executable_ = i;
      return;
    }
  }
}

// What can be told without opening every file: which ones are missing (one warning for all), and
// the executable, which every symbol lookup reads first.
void CoreTargetImpl::check_module_files(const CoreOptions& options) {
  if (options.executable) {
    if (executable_) {
      table_.modules()[*executable_].override_path = options.executable;
    } else {
      warnings_.push_back(fmt::format(
          "cannot tell which mapped file is the executable; {} is not used", *options.executable));
    }
  } else if (options.executable_hint && executable_ && !files_.exists(table_.modules()[*executable_]) &&
             access(options.executable_hint->c_str(), R_OK) == 0) {
    // The core's own path for the executable finds nothing; the one its wrapper recorded does.
    table_.modules()[*executable_].override_path = options.executable_hint;
    table_.modules()[*executable_].looked_up = false;  // exists() marked it missing
  }
  std::vector<std::string> missing;
  for (const Module& module : table_.modules()) {
    if (files_.exists(module)) continue;
    const std::string path = lookup_path(module);
    if (module.saved_header || looks_like_binary(path)) missing.push_back(path);
  }
  if (executable_) files_.file(table_.modules()[*executable_]);
  // One line for every missing file, so that a core from another machine warns once.
  if (!missing.empty()) {
    std::string list = missing.front();
    for (size_t i = 1; i < missing.size() && i < 3; ++i) list += ", " + missing[i];
    if (missing.size() > 3) list += fmt::format(" and {} more", missing.size() - 3);
    missing_files_message_ = fmt::format("cannot find {} (use --sysroot or --lib-path)", list);
    warnings_.push_back(*missing_files_message_);
  }
}

bool CoreTargetImpl::is_elf(const Module& module) const {
  return module.saved_header || files_.file(module) != nullptr;
}

// From the program headers the core saved, which are the process's own; from the file only when
// the core has none (the file may not be the one the process mapped).
uint64_t CoreTargetImpl::load_bias(const Module& module) const {
  if (!module.header_address) return 0;
  const uint64_t page_size = core_->page_size();
  if (module.saved_header) {
    if (auto bias = symbols::load_bias_from(module.saved_header->load_segments, *module.header_address,
                                   page_size)) {
      return *bias;
    }
  }
  if (const symbols::ElfFile* file = files_.file(module)) {
    return symbols::load_bias_from(file->load_segments(), *module.header_address, page_size).value_or(0);
  }
  return 0;
}

std::vector<std::pair<const FileMapping*, const Module*>> CoreTargetImpl::sorted_mappings() const {
  std::vector<std::pair<const FileMapping*, const Module*>> result;
  const auto& mappings = core_->file_mappings();
  result.reserve(mappings.size());
  for (size_t i = 0; i < mappings.size(); ++i) {
    result.emplace_back(&mappings[i], &table_.modules()[module_of_mapping_[i]]);
  }
  std::sort(result.begin(), result.end(),
            [](const auto& a, const auto& b) { return a.first->start < b.first->start; });
  return result;
}

void CoreTargetImpl::fill_process_info() {
  const auto& threads = core_->threads();
  process_.pid = core_->pid().value_or(threads.empty() ? 0 : threads.front().lwp);
  process_.command = core_->command();
  process_.arguments = core_->arguments();
  process_.signal = core_->signal();
  process_.signal_info = core_->signal_info();
  process_.parent_pid = core_->parent_pid();
  process_.uid = core_->uid();
  process_.gid = core_->gid();
  process_.state = core_->state();
  process_.taken_at = core_->taken_at();
  process_.pipe_ends = core_->pipe_ends();
  process_.socket_ends = core_->socket_ends();
  process_.namespace_pids = core_->namespace_pids();
  if (!process_.signal && !threads.empty() && threads.front().current_signal != 0) {
    process_.signal = threads.front().current_signal;
  }
  if (executable_) {
    process_.executable = table_.modules()[*executable_].recorded_path;
  } else if (core_->execfn()) {
    process_.executable = *core_->execfn();
  }
}

// The core's memory alone, for module recovery before the target exists.
class SavedMemory final : public cpython::AddressSpace {
 public:
  explicit SavedMemory(const CoreFile& core) : core_(core) {}
  Expected<void> read(uint64_t address, std::span<std::byte> out) const override {
    return core_.read(address, out);
  }

 private:
  const CoreFile& core_;
};

// A core that lists no mapped files (its notes cut off, or a dumper that writes no NT_FILE): the
// modules are recovered from the ELF headers its memory holds; one line says what was lost and
// what was found. Returns where the executable's header is, when found.
std::optional<uint64_t> recover_file_mappings(CoreFile& core, const CoreOptions& options) {
  std::vector<SegmentStart> segments;
  for (const CoreSegment& segment : core.segments())
    segments.push_back({segment.vaddr, segment.memsz, (segment.flags & PF_W) != 0});
  // A path found in the process's data names the executable only when its file here is that very
  // binary, by build-id.
  const symbols::PathResolver resolver(options.sysroot, options.lib_paths);
  FileFacts files;
  std::map<std::string, std::optional<std::string>> build_ids;  // each file read once
  files.build_id = [&resolver, &build_ids](const std::string& path) -> std::optional<std::string> {
    auto [known, inserted] = build_ids.try_emplace(path);
    if (!inserted) return known->second;
    if (const std::optional<std::string> found = resolver.resolve(path)) {
      if (auto file = symbols::ElfFile::open(*found)) known->second = (*file)->build_id();
    }
    return known->second;
  };
  // A module's header and program headers, for a core that saved none (qemu's).
  files.file_start = [&resolver](const std::string& path) -> std::optional<std::vector<std::byte>> {
    constexpr uint64_t kStartBytes = 64 * 1024;
    const std::optional<std::string> found = resolver.resolve(path);
    if (!found) return std::nullopt;
    auto file = symbols::ElfFile::open(*found);
    if (!file) return std::nullopt;
    std::vector<std::byte> bytes(std::min(kStartBytes, (*file)->file_size()));
    if (!(*file)->read_file_offset_unmapped(0, bytes)) return std::nullopt;
    return bytes;
  };
  // The executable's needed libraries, as paths of the process (the sysroot taken off again).
  files.library_candidates = [&resolver, &options](const std::string& executable) {
    std::vector<std::string> candidates;
    const std::optional<std::string> host = resolver.resolve(executable);
    if (!host) return candidates;
    auto file = symbols::ElfFile::open(*host);
    if (!file) return candidates;
    for (std::string candidate : symbols::library_candidates(**file)) {
      if (!options.sysroot.empty() && candidate.starts_with(options.sysroot + "/"))
        candidate.erase(0, options.sysroot.size());
      candidates.push_back(std::move(candidate));
    }
    return candidates;
  };
  RecoveredModules found =
      recover_modules(SavedMemory(core), segments, options.executable, options.executable_hint,
                      core.page_size(), files, core.auxv());
  std::string what = core.notes_cut()
                         ? "the notes are missing (the core was cut before them): threads' "
                           "registers and the file list are unknown"
                         : "the core lists no mapped files (NT_FILE)";
  if (found.named > 0 && found.headers_from_files) {
    what += fmt::format("; {} modules recovered from the dynamic linker's list and their files (the "
                        "core holds none of their headers; the executable named by {})",
                        found.named, found.executable_named_by.empty() ? "AT_EXECFN" : found.executable_named_by);
  } else if (found.named > 0) {
    what += fmt::format("; modules recovered from {} ELF header{} in memory ({} named", found.elf_headers,
                        found.elf_headers == 1 ? "" : "s", found.named);
    what += found.executable_named_by.empty()
                ? ", the executable not: give it with --exe)"
                : fmt::format(", the executable by {})", found.executable_named_by);
  } else {
    what += fmt::format("; none of the {} ELF header{} in memory could be named (give the "
                        "executable with --exe)",
                        found.elf_headers, found.elf_headers == 1 ? "" : "s");
  }
  core.use_file_mappings(std::move(found.mappings), std::move(what));
  return found.executable_start;
}

}  // namespace

Expected<std::unique_ptr<CoreTarget>> CoreTarget::open(const CoreOptions& options) {
  auto core = CoreFile::open(options.core_path);
  if (!core) return std::unexpected(core.error());
  if (options.maps_hint) (*core)->use_saved_file_mappings(parse_proc_maps(*options.maps_hint));
  std::optional<uint64_t> executable_start;
  if ((*core)->file_mappings().empty() && !(*core)->snapshot_symbols())
    executable_start = recover_file_mappings(**core, options);
  return std::make_unique<CoreTargetImpl>(std::move(*core), options, executable_start);
}

analysis::TargetFacts CoreTarget::facts() const {
  analysis::TargetFacts facts;
  facts.pid = process().pid;
  facts.os_threads = threads();
  facts.namespace_pids = process().namespace_pids;
  facts.function_at = [this](uint64_t pc) { return function_at(pc); };
  const ProcessInfo& info = process();
  if (!options().saved_open_files.empty() || !info.pipe_ends.empty() || !info.socket_ends.empty()) {
    facts.describe_fd = [this](int64_t fd) -> std::optional<diagnosis::FileDescriptorFacts> {
      if (auto found = options().saved_open_files.find(fd); found != options().saved_open_files.end())
        return diagnosis::FileDescriptorFacts{found->second, {}};
      // A snapshot's notes: which pipe or connection, not who holds its other end (a triage
      // matches that).
      for (const cpython::PipeEnd& end : process().pipe_ends)
        if (end.fd == fd) return diagnosis::FileDescriptorFacts{fmt::format("pipe:[{}]", end.inode), {}};
      for (const cpython::SocketEnd& end : process().socket_ends)
        if (end.fd == fd) return diagnosis::FileDescriptorFacts{fmt::format("TCP {} -> {}", end.local, end.remote), {}};
      return std::nullopt;
    };
  }
  return facts;
}

}  // namespace hangpy::targets
