#include "targets/live_target.h"

#include "targets/file_descriptors.h"
#include "targets/live_memory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <elf.h>
#include <sys/uio.h>
#include <unistd.h>
#include <climits>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "base/parse_number.h"
#include "targets/blocked_threads.h"
#include "targets/module_table.h"
#include "targets/containers.h"
#include "targets/namespace_pids.h"
#include "targets/pipe_ends.h"
#include "targets/socket_ends.h"
#include "targets/proc_file.h"
#include "symbols/elf_file.h"
#include "symbols/module_placement.h"
#include "symbols/path_resolver.h"

namespace hangpy::targets {
namespace {

constexpr std::string_view kDeletedSuffix = " (deleted)";

// One line of /proc/PID/maps.
struct MapsLine {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string permissions;
  uint64_t offset = 0;
  std::string path;  // empty for anonymous memory; "[heap]", "[stack]"... for the kernel's own
};

std::vector<MapsLine> parse_maps(const std::string& text) {
  std::vector<MapsLine> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    MapsLine entry;
    char permissions[8] = {};
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %llu %n", &start, &end, permissions,
                    &offset, &inode, &path_at) < 5) {
      continue;
    }
    entry.start = start;
    entry.end = end;
    entry.permissions = permissions;
    entry.offset = offset;
    if (path_at > 0 && static_cast<size_t>(path_at) <= line.size()) entry.path = line.substr(path_at);
    lines.push_back(std::move(entry));
  }
  return lines;
}

// A file mapped by the process, possibly in several pieces.
struct Module : ModuleSpan {
  std::optional<std::string> build_id;     // from the ELF header in the process's memory
  std::vector<symbols::LoadSegment> load_segments;
  bool elf_in_memory = false;
  mutable bool looked_up = false;
  mutable std::unique_ptr<symbols::ElfFile> file;
};

std::string lookup_path(const Module& module) {
  std::string path = module.recorded_path;
  if (path.ends_with(kDeletedSuffix)) path.resize(path.size() - kDeletedSuffix.size());
  return path;
}

// The thread ids in /proc/PID/task, in the kernel's order (the main thread first).
std::vector<int64_t> list_threads(int pid) {
  std::vector<int64_t> ids;
  DIR* directory = opendir(fmt::format("/proc/{}/task", pid).c_str());
  if (directory == nullptr) return ids;
  while (dirent* entry = readdir(directory)) {
    if (auto id = parse_decimal<int64_t>(entry->d_name)) ids.push_back(*id);
  }
  closedir(directory);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// A thread's call, sp and pc as /proc/PID/task/TID/syscall shows them (blocked_threads.h).
cpython::NativeThread thread_from_syscall_file(int pid, int64_t lwp) {
  auto text = read_proc_file(fmt::format("/proc/{}/task/{}/syscall", pid, lwp));
  if (!text) {
    cpython::NativeThread thread;
    thread.lwp = lwp;
    return thread;
  }
  return parse_syscall_line(*text, lwp);
}

// Whether `pid` lives in another PID namespace than this process (a container's, read from the
// host): its thread states then name its threads by that namespace's ids.
bool in_other_pid_namespace(int pid) {
  struct stat theirs {}, ours {};
  if (stat(fmt::format("/proc/{}/ns/pid", pid).c_str(), &theirs) != 0 || stat("/proc/self/ns/pid", &ours) != 0)
    return false;
  return theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev;
}

// The thread's id in its innermost PID namespace: the last id of its status's NSpid line.
std::optional<int64_t> namespace_thread_id(int pid, int64_t lwp) {
  const std::vector<int64_t> ids = nspid_ids(fmt::format("/proc/{}/task/{}/status", pid, lwp));
  if (ids.empty()) return std::nullopt;
  return ids.back();
}

class LiveTargetImpl final : public LiveTarget {
  // The two ways into a module that the module table's lookups take (defined first: their
  // return types are deduced).
  auto file_of() const {
    return [this](const Module& module) { return file_of(module); };
  }
  auto bias_of() const {
    return [this](const Module& module) { return load_bias(module); };
  }

 public:
  LiveTargetImpl(int pid, std::vector<MapsLine> maps, int mem_fd)
      : pid_(pid),
        maps_(std::move(maps)),
        page_size_(static_cast<uint64_t>(sysconf(_SC_PAGESIZE))),
        memory_(pid, page_size_, mem_fd),
        resolver_(fmt::format("/proc/{}/root", pid), {}),
        namespaced_(in_other_pid_namespace(pid)) {
    std::vector<std::pair<uint64_t, uint64_t>> unwritable;
    for (const MapsLine& line : maps_)
      if (line.permissions.find('w') == std::string::npos) unwritable.emplace_back(line.start, line.end);
    memory_.set_unwritable(std::move(unwritable));
    collect_modules();
    fill_process_info();
    find_executable();
    table_.set_executable(executable_);
    if (executable_) process_.executable = table_.modules()[*executable_].recorded_path;
    if (memory_.through_proc_mem())
      warnings_.push_back("this kernel has no process_vm_readv (ENOSYS): memory was read through /proc/PID/mem");
  }

  const cpython::AddressSpace& memory() const override { return memory_; }
  const cpython::ProcessInfo& process() const override { return process_; }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  void set_registers(std::vector<cpython::NativeThread> threads) override {
    registers_ = std::move(threads);
  }
  void forget_memory() override { memory_.forget(); }
  void refresh_memory() override { memory_.refresh(); }
  void refresh_memory_read_for(const std::set<int64_t>& asleep) override { memory_.refresh_read_for(asleep); }
  void stop_noting_readers() override { memory_.stop_noting_readers(); }
  std::vector<uint64_t> kept_pages() const override { return memory_.kept(); }
  void keep_only(const std::vector<uint64_t>& pages) override { memory_.keep_only(pages); }

  std::optional<uint64_t> find_symbol(std::string_view name) const override {
    return table_.find_symbol(name, file_of(), bias_of());
  }

  std::optional<uint64_t> find_section(std::string_view name) const override {
    return table_.find_section(name, file_of(), bias_of());
  }

  std::optional<std::string> function_at(uint64_t pc) const override {
    return table_.function_at(pc, file_of(), bias_of());
  }

  std::optional<std::string> module_file(const std::string& recorded_path) const override {
    return table_.module_file(recorded_path, file_of());
  }
  const symbols::ElfFile* module_elf_file(const std::string& recorded_path) const override {
    return table_.module_elf_file(recorded_path, file_of());
  }

  std::optional<cpython::MemoryRange> vdso() const override {
    for (const MapsLine& line : maps_)
      if (line.path == "[vdso]") return cpython::MemoryRange{line.start, line.end};
    return std::nullopt;
  }

  std::vector<cpython::NativeThread> threads() const override {
    std::vector<cpython::NativeThread> result;
    if (registers_) {
      result = *registers_;
    } else {
      for (int64_t lwp : list_threads(pid_)) result.push_back(thread_from_syscall_file(pid_, lwp));
    }
    if (namespaced_) {
      for (cpython::NativeThread& thread : result) {
        if (!thread.namespace_lwp) thread.namespace_lwp = namespace_thread_id(pid_, thread.lwp);
      }
    }
    return result;
  }

  std::vector<cpython::MappedModule> modules() const override {
    std::vector<cpython::MappedModule> result;
    for (const Module& module : table_.modules()) {
      if (module.elf_in_memory) {
        result.push_back({module.recorded_path, module.start, module.end, load_bias(module)});
      }
    }
    return result;
  }

  std::vector<cpython::MemoryRange> writable_ranges() const override {
    std::vector<cpython::MemoryRange> ranges;
    for (const MapsLine& line : maps_) {
      if (line.permissions.size() > 1 && line.permissions[1] == 'w' && !line.path.starts_with("[v"))
        ranges.push_back({line.start, line.end});
    }
    return ranges;
  }

 private:
  void collect_modules();
  void read_header(Module& module);
  void find_executable();
  void fill_process_info();
  const symbols::ElfFile* file_of(const Module& module) const;

  uint64_t load_bias(const Module& module) const {
    if (!module.header_address) return 0;
    return symbols::load_bias_from(module.load_segments, *module.header_address, page_size_)
        .value_or(0);
  }

  const int pid_;
  const std::vector<MapsLine> maps_;
  const uint64_t page_size_;
  LiveMemory memory_;
  const symbols::PathResolver resolver_;
  const bool namespaced_;  // in another PID namespace: threads() says each one's id there
  ModuleTable<Module> table_;
  std::optional<size_t> executable_;  // index into table_.modules()
  cpython::ProcessInfo process_;
  mutable std::vector<std::string> warnings_;
  mutable std::mutex files_mutex_;
  std::optional<std::vector<cpython::NativeThread>> registers_;
};

void LiveTargetImpl::collect_modules() {
  for (const MapsLine& line : maps_) {
    if (!line.path.starts_with("/")) continue;  // anonymous, [heap], [vdso]...
    table_.add_mapping(line.path, line.start, line.end, line.offset);
  }
  for (Module& module : table_.modules()) read_header(module);
}

// The ELF header and program headers the process has mapped at the module's start: the process's
// own, whatever happened to the file since (it may be replaced or deleted).
void LiveTargetImpl::read_header(Module& module) {
  if (!module.header_address) return;
  const uint64_t size = std::min(page_size_, module.header_mapping_end - *module.header_address);
  std::vector<std::byte> image(size);
  if (!memory_.read(*module.header_address, image)) return;
  if (image.size() < SELFMAG || std::memcmp(image.data(), ELFMAG, SELFMAG) != 0) return;
  auto elf = symbols::ElfFile::from_image(std::move(image), module.recorded_path);
  if (!elf) return;
  module.elf_in_memory = true;
  module.build_id = (*elf)->build_id();
  module.load_segments = (*elf)->load_segments();
}

// The file the process mapped: by its path inside the process's root when the build-id agrees,
// else the mapping itself (/proc/PID/map_files: the very inode, even deleted or replaced; root
// only), else the file at that path with a warning.
const symbols::ElfFile* LiveTargetImpl::file_of(const Module& module) const {
  std::lock_guard lock(files_mutex_);
  if (module.looked_up) return module.file.get();
  module.looked_up = true;
  if (!module.elf_in_memory) return nullptr;
  const std::string path = lookup_path(module);
  std::unique_ptr<symbols::ElfFile> opened;  // the file resolve() read the build-id of
  std::optional<std::string> found = resolver_.resolve(path, module.build_id, &opened);
  if (!found && module.header_address) {
    const std::string mapped = fmt::format("/proc/{}/map_files/{:x}-{:x}", pid_,
                                           *module.header_address, module.header_mapping_end);
    if (access(mapped.c_str(), R_OK) == 0) found = mapped;
  }
  if (!found) found = resolver_.resolve(path);
  if (!found) {
    warnings_.push_back(fmt::format("cannot open {} (mapped by process {})", path, pid_));
    return nullptr;
  }
  if (opened) {
    module.file = std::move(opened);
  } else {
    auto file = symbols::ElfFile::open(*found);
    if (!file) {
      warnings_.push_back(file.error().message);
      return nullptr;
    }
    module.file = std::move(*file);
  }
  if (module.build_id && module.file->build_id() && *module.build_id != *module.file->build_id()) {
    warnings_.push_back(fmt::format("the build-id of {} is {}, process {} mapped {}", *found,
                                    *module.file->build_id(), pid_, *module.build_id));
  }
  return module.file.get();
}

void LiveTargetImpl::find_executable() {
  char buffer[4096];
  const ssize_t length =
      readlink(fmt::format("/proc/{}/exe", pid_).c_str(), buffer, sizeof buffer - 1);
  if (length <= 0) return;
  const std::string exe(buffer, static_cast<size_t>(length));
  for (size_t i = 0; i < table_.modules().size(); ++i) {
    if (table_.modules()[i].recorded_path == exe) {
      executable_ = i;
      return;
    }
  }
}

void LiveTargetImpl::fill_process_info() {
  process_.pid = pid_;
  if (auto comm = read_proc_file(fmt::format("/proc/{}/comm", pid_))) {
    process_.command = *comm;
    if (process_.command.ends_with('\n')) process_.command.pop_back();
  }
  if (auto arguments = read_proc_file(fmt::format("/proc/{}/cmdline", pid_))) {
    while (arguments->ends_with('\0')) arguments->pop_back();
    std::replace(arguments->begin(), arguments->end(), '\0', ' ');
    process_.arguments = *arguments;
  }
  if (auto fields = read_proc_stat(fmt::format("/proc/{}/stat", pid_)); fields && fields->size() >= 2) {
    process_.state = fields->front()[0];
    if (auto parent = parse_decimal<int64_t>((*fields)[1])) process_.parent_pid = *parent;
  }
  process_.pipe_ends = live_pipe_ends(pid_);
  process_.container = live_container(pid_);
  process_.namespace_pids = live_namespace_pids(pid_);
  process_.socket_ends = live_socket_ends(pid_);
  if (auto status = read_proc_file(fmt::format("/proc/{}/status", pid_))) {
    std::istringstream lines(*status);
    for (std::string line; std::getline(lines, line);) {
      unsigned real = 0;
      if (std::sscanf(line.c_str(), "Uid: %u", &real) == 1) process_.uid = real;
      if (std::sscanf(line.c_str(), "Gid: %u", &real) == 1) process_.gid = real;
    }
  }
}

std::optional<int64_t> tracer_of(int pid) {
  auto status = read_proc_file(fmt::format("/proc/{}/status", pid));
  if (!status) return std::nullopt;
  std::istringstream lines(*status);
  for (std::string line; std::getline(lines, line);) {
    long long tracer = 0;
    if (std::sscanf(line.c_str(), "TracerPid: %lld", &tracer) == 1 && tracer != 0) return tracer;
  }
  return std::nullopt;
}

}  // namespace

LiveFailure describe_access_failure(int pid, int error_number, const std::string& what) {
  if (error_number == ESRCH || error_number == ENOENT) {
    return {LiveFailure::Kind::kNoProcess, fmt::format("there is no process {}", pid)};
  }
  if (error_number == EPERM || error_number == EACCES) {
    if (auto tracer = tracer_of(pid)) {
      std::string name;
      if (auto comm = read_proc_file(fmt::format("/proc/{}/comm", *tracer))) {
        name = fmt::format(" ({})", comm->substr(0, comm->find('\n')));
      }
      return {LiveFailure::Kind::kNotPermitted,
              fmt::format("process {} is already traced by process {}{}: detach it first (gdb: "
                          "detach), or read without stopping with --nonblocking",
                          pid, *tracer, name)};
    }
    return {LiveFailure::Kind::kNotPermitted,
            fmt::format("not permitted to {} process {}: run as root or as its owner with "
                        "kernel.yama.ptrace_scope=0 (sysctl), and in a container with "
                        "CAP_SYS_PTRACE (docker run --cap-add=SYS_PTRACE)",
                        what, pid)};
  }
  return {LiveFailure::Kind::kOther,
          fmt::format("cannot {} process {}: {}", what, pid, std::strerror(error_number))};
}

LiveExpected<std::unique_ptr<LiveTarget>> LiveTarget::open(int pid) {
  if (pid == getpid()) {
    return std::unexpected(LiveFailure{LiveFailure::Kind::kOther,
                                       fmt::format("process {} is coreanalyze itself", pid)});
  }
  auto maps = read_proc_file(fmt::format("/proc/{}/maps", pid));
  if (!maps) return std::unexpected(describe_access_failure(pid, errno, "read the mappings of"));
  if (maps->empty()) {
    return std::unexpected(LiveFailure{LiveFailure::Kind::kOther,
                                       fmt::format("process {} maps no memory (a kernel thread, or "
                                                   "exiting)", pid)});
  }
  // process_vm_readv needs the same permission as ptrace: ask now, for a clear message.
  std::byte probe[1];
  iovec local{probe, 1};
  iovec remote{nullptr, 1};
  int mem_fd = -1;
  if (process_vm_readv(pid, &local, 1, &remote, 1, 0) < 0 && errno != EFAULT) {
    // A kernel built without CONFIG_CROSS_MEMORY_ATTACH (Flatcar) has no process_vm_readv:
    // /proc/PID/mem reads the same memory under the same permission, one call a page.
    if (errno != ENOSYS) return std::unexpected(describe_access_failure(pid, errno, "read the memory of"));
    mem_fd = ::open(fmt::format("/proc/{}/mem", pid).c_str(), O_RDONLY | O_CLOEXEC);
    if (mem_fd < 0) return std::unexpected(describe_access_failure(pid, errno, "read the memory of"));
  }
  return std::make_unique<LiveTargetImpl>(pid, parse_maps(*maps), mem_fd);
}

analysis::TargetFacts LiveTarget::facts() const {
  analysis::TargetFacts facts;
  facts.pid = process().pid;
  facts.os_threads = threads();
  facts.namespace_pids = process().namespace_pids;
  facts.function_at = [this](uint64_t pc) { return function_at(pc); };
  const int pid = process().pid;
  facts.describe_fd = [pid](int64_t fd) -> std::optional<diagnosis::FileDescriptorFacts> {
    auto described = describe_file_descriptor(pid, static_cast<int>(fd));
    if (!described) return std::nullopt;
    return diagnosis::FileDescriptorFacts{described->text, {described->other_end_pids.begin(),
                                                            described->other_end_pids.end()}};
  };
  return facts;
}

}  // namespace hangpy::targets
