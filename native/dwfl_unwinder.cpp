#include "native/dwfl_unwinder.h"

#include <fcntl.h>
#include <unistd.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include "native/dwfl_handles.h"
#include "native/dwfl_symbolizer.h"

namespace hangpy::native {
namespace {

constexpr unsigned kDwarfRegisterRsp = 7;  // x86-64 psABI DWARF register number of %rsp

std::string dwfl_message() { return dwfl_errmsg(-1); }

// The sysroot's separate debug file for a build-id: .build-id/xx/yyyy.debug.
std::string build_id_debug_path(const std::string& sysroot, const unsigned char* bits, int size) {
  std::string hex;
  for (int i = 0; i < size; ++i) hex += fmt::format("{:02x}", bits[i]);
  return fmt::format("{}/usr/lib/debug/.build-id/{}/{}.debug", sysroot, hex.substr(0, 2),
                     hex.substr(2));
}

// Where a module's debug file may be on this machine (under `sysroot`): the places libdwfl's
// standard search looks with its default path (":.debug:/usr/lib/debug"), in its order: by
// build-id under /usr/lib/debug/.build-id, then by the .gnu_debuglink name beside the file, in
// .debug/ beside it, and under /usr/lib/debug at the module's own directory.
std::vector<std::string> local_debug_paths(const std::string& sysroot, const unsigned char* bits, int size,
                                           const char* module_name, const char* file_name,
                                           const char* debuglink_file) {
  std::vector<std::string> paths{build_id_debug_path(sysroot, bits, size)};
  if (debuglink_file == nullptr || *debuglink_file == '\0' || std::strchr(debuglink_file, '/') != nullptr)
    return paths;
  if (file_name != nullptr) {
    const std::filesystem::path directory = std::filesystem::path(file_name).parent_path();
    if ((directory / debuglink_file).string() != file_name) paths.push_back((directory / debuglink_file).string());
    paths.push_back((directory / ".debug" / debuglink_file).string());
  }
  if (module_name != nullptr && module_name[0] == '/') {
    const std::filesystem::path directory = std::filesystem::path(module_name).parent_path();
    paths.push_back(sysroot + "/usr/lib/debug" + (directory / debuglink_file).string());
  }
  return paths;
}

}  // namespace

constexpr const char* kVdsoName = "[vdso]";

struct DwflUnwinder::Impl {
  UnwinderOptions options;
  std::vector<char> vdso_elf_image;  // the memory libdwfl's Elf of the vDSO reads
  Elf64_Ehdr core_header{};  // the memory a header-only Elf of the core reads (attach)
  FileDescriptor core_fd;
  ElfHandle core_elf;
  Dwfl_Callbacks callbacks{};
  DwflHandle dwfl;  // declared last: ended before the core it reads
  // Every thread's frames as walked (walk_all), then symbolized into `stacks` on first need.
  struct WalkedThread {
    std::vector<RawFrame> frames;
    std::optional<std::string> end_reason;
  };
  std::optional<std::map<int64_t, WalkedThread>> walked;
  std::optional<std::map<int64_t, NativeStack>> stacks;
  std::optional<Error> walk_error;
  size_t first_unwalked = 0;  // options.threads from here on were added after the last walk
  // Kept across walks (add_threads): a pc, a module's symbols are looked up once.
  std::optional<DwflSymbolizer> symbolizer;

  // libdwfl's callbacks carry no pointer of ours for the whole session, only per module, so the
  // Impl that runs a libdwfl call is named here for the length of the call.
  static thread_local Impl* current;
  struct Current {
    explicit Current(Impl* impl) : previous(current) { current = impl; }
    ~Current() { current = previous; }
    Impl* previous;
  };

  static int find_elf(Dwfl_Module* module, void** userdata, const char* module_name,
                      Dwarf_Addr base, char** file_name, Elf** elf) noexcept;
  static int find_debuginfo(Dwfl_Module* module, void** userdata, const char* module_name,
                            Dwarf_Addr base, const char* file_name, const char* debuglink_file,
                            GElf_Word debuglink_crc, char** debuginfo_file_name) noexcept;

  static pid_t next_thread(Dwfl* dwfl, void* dwfl_arg, void** thread_argp) noexcept;
  static bool memory_read(Dwfl* dwfl, Dwarf_Addr address, Dwarf_Word* result,
                          void* dwfl_arg) noexcept;
  static bool set_initial_registers(Dwfl_Thread* thread, void* thread_arg) noexcept;

  Expected<void> attach();
  Expected<void> report_modules();
  Expected<void> attach_threads();
  void walk_all();
  void symbolize_all();
};

thread_local DwflUnwinder::Impl* DwflUnwinder::Impl::current = nullptr;

// "Which file is this module" has one answer: the shell's path resolution. A module it has no
// file for is left to libdwfl, which then reads what the core holds of it (the vDSO).
int DwflUnwinder::Impl::find_elf(Dwfl_Module* module, void** userdata,
                                     const char* module_name, Dwarf_Addr base, char** file_name,
                                     Elf** elf) noexcept {
  try {
    Impl* self = current;
    if (self == nullptr || module_name == nullptr) return -1;
    if (std::strcmp(module_name, kVdsoName) == 0 && !self->options.vdso_image.empty()) {
      const auto* bytes = reinterpret_cast<const char*>(self->options.vdso_image.data());
      self->vdso_elf_image.assign(bytes, bytes + self->options.vdso_image.size());
      *elf = elf_memory(self->vdso_elf_image.data(), self->vdso_elf_image.size());
      return -1;  // no file: libdwfl takes the Elf
    }
    if (!self->options.module_file) return -1;
    std::optional<std::string> path = self->options.module_file(module_name);
    if (!path) {
      // The vDSO and modules the core names by no file: libdwfl builds them from core memory.
      return dwfl_build_id_find_elf(module, userdata, module_name, base, file_name, elf);
    }
    if (self->options.module_elf) {
      if (Elf* shared = self->options.module_elf(module_name)) {
        *file_name = ::strdup(path->c_str());
        *elf = shared;  // libdwfl ends this reference with the module
        return -1;
      }
    }
    FileDescriptor fd(::open(path->c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return -1;
    *file_name = ::strdup(path->c_str());
    return fd.release();
  } catch (...) {
    return -1;  // nothing may cross a C callback
  }
}

int DwflUnwinder::Impl::find_debuginfo(Dwfl_Module* module, void** userdata,
                                           const char* module_name, Dwarf_Addr base,
                                           const char* file_name, const char* debuglink_file,
                                           GElf_Word debuglink_crc,
                                           char** debuginfo_file_name) noexcept {
  try {
    Impl* self = current;
    const unsigned char* bits = nullptr;
    GElf_Addr vaddr = 0;
    const int size = dwfl_module_build_id(module, &bits, &vaddr);
    const std::string sysroot = self != nullptr ? self->options.sysroot : std::string();
    if (size > 1) {
      // libdwfl checks a debug file's build-id against the module's before it uses it, so a file
      // found by name (the debug link) is as safe as one found by build-id.
      for (const std::string& path : local_debug_paths(sysroot, bits, size, module_name, file_name, debuglink_file)) {
        FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (fd.get() < 0) continue;
        *debuginfo_file_name = ::strdup(path.c_str());
        return fd.release();
      }
    }
    // Why not libdwfl's standard search first: when it finds no local file it asks debuginfod, and
    // to do so loads libdebuginfod and the ~20 libraries behind it (libcurl, gnutls, krb5...),
    // 3-4 ms of every run that reads a module without debug info, even with no server set. It is
    // asked only when DEBUGINFOD_URLS names a server (or the module has no build-id).
    const char* urls = std::getenv("DEBUGINFOD_URLS");
    if (size > 1 && (urls == nullptr || *urls == '\0')) {
      errno = ENOENT;
      return -1;
    }
    return dwfl_standard_find_debuginfo(module, userdata, module_name, base, file_name,
                                        debuglink_file, debuglink_crc, debuginfo_file_name);
  } catch (...) {
    return -1;
  }
}

// The threads of options.threads, in order; *thread_argp holds the current one.
pid_t DwflUnwinder::Impl::next_thread(Dwfl*, void* dwfl_arg, void** thread_argp) noexcept {
  auto* self = static_cast<Impl*>(dwfl_arg);
  const auto& threads = self->options.threads;
  const auto* current = static_cast<const ThreadRegisters*>(*thread_argp);
  // A walk takes the threads added since the last one (add_threads), not those walked before.
  const size_t next = current == nullptr ? self->first_unwalked : static_cast<size_t>(current - threads.data()) + 1;
  if (next >= threads.size()) return 0;
  *thread_argp = const_cast<ThreadRegisters*>(&threads[next]);
  return static_cast<pid_t>(threads[next].lwp);
}

bool DwflUnwinder::Impl::memory_read(Dwfl*, Dwarf_Addr address, Dwarf_Word* result,
                                         void* dwfl_arg) noexcept {
  try {
    auto* self = static_cast<Impl*>(dwfl_arg);
    auto word = cpython::read_value<uint64_t>(*self->options.memory, address);
    if (!word) return false;
    *result = *word;
    return true;
  } catch (...) {
    return false;
  }
}

bool DwflUnwinder::Impl::set_initial_registers(Dwfl_Thread* thread, void* thread_arg) noexcept {
  const auto* registers = static_cast<const ThreadRegisters*>(thread_arg);
  const unsigned sp = registers->sp_index();
  if (registers->only_pc_and_sp) {
    if (!dwfl_thread_state_registers(thread, sp, 1, &registers->dwarf[sp])) return false;
  } else if (!dwfl_thread_state_registers(thread, 0, registers->count(), registers->dwarf.data())) {
    return false;
  }
  dwfl_thread_state_register_pc(thread, registers->dwarf[registers->pc_index()]);
  return true;
}

// The shell's threads and memory when it gave them (see UnwinderOptions::memory), else libdwfl's
// own reading of the core.
Expected<void> DwflUnwinder::Impl::attach_threads() {
  if (options.memory != nullptr && !options.threads.empty()) {
    static const Dwfl_Thread_Callbacks kCallbacks = {
        &Impl::next_thread, nullptr, &Impl::memory_read, &Impl::set_initial_registers,
        nullptr, nullptr};
    if (dwfl_attach_state(dwfl.get(), core_elf.get(), static_cast<pid_t>(options.threads[0].lwp),
                          &kCallbacks, this))
      return {};
  } else if (dwfl_core_file_attach(dwfl.get(), core_elf.get()) >= 0) {
    return {};
  }
  return make_error(ErrorKind::kInvalidInput,
                    fmt::format("libdwfl cannot read the threads of {}: {}", options.core_path,
                                dwfl_message()));
}

// The shell's modules, each opened only when first needed; else libdwfl's reading of the core.
Expected<void> DwflUnwinder::Impl::report_modules() {
  if (options.modules.empty()) {
    if (dwfl_core_file_report(dwfl.get(), core_elf.get(), nullptr) >= 0) return {};
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("libdwfl cannot read the modules of {}: {}", options.core_path,
                                  dwfl_message()));
  }
  dwfl_report_begin(dwfl.get());
  // A module libdwfl refuses (one overlapping another) only leaves its frames unnamed.
  for (const ReportedModule& module : options.modules)
    dwfl_report_module(dwfl.get(), module.recorded_path.c_str(), module.start, module.end);
  if (!options.vdso_image.empty())
    dwfl_report_module(dwfl.get(), kVdsoName, options.vdso_address,
                       options.vdso_address + options.vdso_image.size());
  return {};
}

Expected<void> DwflUnwinder::Impl::attach() {
  elf_version(EV_CURRENT);
  // A live process has no core: the shell gives its memory, threads and modules, and libdwfl
  // takes the machine from the first module it can open.
  const bool no_core = options.core_path.empty();
  if (no_core && (options.memory == nullptr || options.threads.empty() || options.modules.empty()))
    return make_error(ErrorKind::kInvalidInput, "no core, and no memory, threads and modules");
  if (!no_core) {
    core_fd = FileDescriptor(::open(options.core_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (core_fd.get() < 0)
      return make_error(ErrorKind::kIo,
                        fmt::format("cannot open {}: {}", options.core_path, std::strerror(errno)));
    // With the shell's memory, threads and modules, libdwfl takes only the machine from the
    // core's Elf: its ELF header alone, without the program and section headers. libelf's Elf of
    // the whole core would map it a second time and set up an entry per section (gdb's gcore
    // writes one per segment: 224 KB of fresh pages for a torch rank's 1,078).
    const bool header_only = options.memory != nullptr && !options.threads.empty() && !options.modules.empty();
    if (header_only && ::pread(core_fd.get(), &core_header, sizeof core_header, 0) == sizeof core_header) {
      core_header.e_phoff = core_header.e_shoff = 0;
      core_header.e_phnum = core_header.e_shnum = core_header.e_shstrndx = 0;
      core_elf.reset(elf_memory(reinterpret_cast<char*>(&core_header), sizeof core_header));
    } else {
      core_elf.reset(elf_begin(core_fd.get(), ELF_C_READ_MMAP, nullptr));
    }
    if (!core_elf)
      return make_error(ErrorKind::kInvalidInput,
                        fmt::format("{}: {}", options.core_path, elf_errmsg(-1)));
  }
  callbacks.find_elf = &Impl::find_elf;
  callbacks.find_debuginfo = &Impl::find_debuginfo;
  callbacks.section_address = dwfl_offline_section_address;
  dwfl.reset(dwfl_begin(&callbacks));
  if (!dwfl) return make_error(ErrorKind::kIo, "libdwfl: " + dwfl_message());
  Current scope(this);
  if (auto reported = report_modules(); !reported) return reported;
  dwfl_report_end(dwfl.get(), nullptr, nullptr);
  return attach_threads();
}

namespace {

struct ThreadWalk {
  std::vector<RawFrame> frames;
  std::optional<std::string> end_reason;
  size_t max_frames = 0;
  const cpython::AddressSpace* memory = nullptr;  // for stepping over perf trampolines
  // The registers of the frame that called a perf trampoline the walk stopped at: where it goes on.
  std::optional<ThreadRegisters> resume{};
  // The thread's machine: which DWARF register is the stack pointer; perf trampolines are matched
  // by their x86-64 bytes only.
  cpython::Machine machine = cpython::Machine::kX86_64;
};

constexpr unsigned kDwarfRegisterRbp = 6;
constexpr unsigned kDwarfRegisterPc = 16;
constexpr std::array<unsigned, 6> kCalleeSaved = {3, 6, 12, 13, 14, 15};  // rbx rbp r12-r15

// CPython's perf trampoline (Python/asm_trampoline.S, copied into anonymous executable memory for
// each code object under -X perf) has no unwind table, so libdwfl stops at it. Its two x86-64
// shapes are a few instructions around `call *%rcx`: 3.12 and 3.13 `sub $8,%rsp; call; add $8,%rsp;
// ret`, 3.14 on `push %rbp; mov %rsp,%rbp; call; pop %rbp; ret`. A frame whose return address is
// right after that call (the caller checked it is in no module) is one: its caller's registers are the trampoline's with
// the return address and stack pointer (and rbp) it restores. Matched by its bytes, never guessed.
std::optional<ThreadRegisters> step_over_trampoline(Dwfl_Frame* state, const RawFrame& frame,
                                                    const cpython::AddressSpace& memory) {
  if (frame.pc < 2) return std::nullopt;
  auto code = cpython::read_value<std::array<uint8_t, 7>>(memory, frame.pc - 2);
  if (!code || (*code)[0] != 0xff || (*code)[1] != 0xd1) return std::nullopt;  // call *%rcx
  const std::array<uint8_t, 5> add_ret = {0x48, 0x83, 0xc4, 0x08, 0xc3};
  const bool pops_rbp = (*code)[2] == 0x5d && (*code)[3] == 0xc3;
  if (!pops_rbp && !std::equal(add_ret.begin(), add_ret.end(), code->begin() + 2)) return std::nullopt;
  ThreadRegisters caller;
  bool callee_saved_known = true;
  for (unsigned reg = 0; reg < kDwarfRegisterPc; ++reg) {
    Dwarf_Word value = 0;
    if (dwfl_frame_reg(state, reg, &value) == 0) caller.dwarf[reg] = value;
    else if (std::find(kCalleeSaved.begin(), kCalleeSaved.end(), reg) != kCalleeSaved.end()) callee_saved_known = false;
  }
  const uint64_t sp = frame.sp;
  auto return_address = cpython::read_value<uint64_t>(memory, sp + 8);
  if (!return_address || *return_address == 0) return std::nullopt;
  if (pops_rbp) {
    auto rbp = cpython::read_value<uint64_t>(memory, sp);
    if (!rbp) return std::nullopt;
    caller.dwarf[kDwarfRegisterRbp] = *rbp;
  }
  caller.dwarf[kDwarfRegisterRsp] = sp + 16;
  caller.dwarf[kDwarfRegisterPc] = *return_address;
  // A register libdwfl did not know stays unknown rather than a made-up value.
  caller.only_pc_and_sp = !callee_saved_known;
  return caller;
}

int on_frame(Dwfl_Frame* state, void* arg) noexcept {
  auto* walk = static_cast<ThreadWalk*>(arg);
  try {
    RawFrame frame;
    bool is_activation = false;
    if (!dwfl_frame_pc(state, &frame.pc, &is_activation)) {
      walk->end_reason = "no pc: " + dwfl_message();
      return DWARF_CB_ABORT;
    }
    frame.is_activation = is_activation;
    Dwarf_Word sp = 0;
    const unsigned sp_register = walk->machine == cpython::Machine::kAarch64 ? 31 : kDwarfRegisterRsp;
    if (dwfl_frame_reg(state, sp_register, &sp) == 0) frame.sp = sp;
    // A frame that unwinds to itself would repeat forever (libdwfl has no guard of its own).
    if (!walk->frames.empty() && walk->frames.back().pc == frame.pc &&
        walk->frames.back().sp == frame.sp) {
      walk->end_reason = fmt::format("the frame at pc 0x{:x} repeats", frame.pc);
      return DWARF_CB_ABORT;
    }
    walk->frames.push_back(frame);
    // A return address in no module: a perf trampoline, or other code made at run time. One
    // module lookup per frame decides both.
    Dwfl* dwfl = dwfl_thread_dwfl(dwfl_frame_thread(state));
    if (!is_activation && walk->memory != nullptr && walk->frames.size() < walk->max_frames &&
        frame.pc > 0 && dwfl_addrmodule(dwfl, frame.pc - 1) == nullptr) {
      auto resume = walk->machine == cpython::Machine::kX86_64 ? step_over_trampoline(state, frame, *walk->memory)
                                                               : std::nullopt;
      if (resume) {
        walk->frames.back().perf_trampoline = true;
        walk->resume = std::move(resume);
        return DWARF_CB_ABORT;
      }
      // Code made at run time (libdwfl may still go on by the frame pointer, where it keeps one).
      walk->frames.back().generated_code = true;
    }
    if (walk->frames.size() >= walk->max_frames) {
      walk->end_reason = fmt::format("stopped after {} frames", walk->max_frames);
      return DWARF_CB_ABORT;
    }
    return DWARF_CB_OK;
  } catch (...) {
    walk->end_reason = "out of memory";
    return DWARF_CB_ABORT;
  }
}

struct AllThreads {
  std::map<int64_t, ThreadWalk> walks;
  size_t max_frames = 0;
  const cpython::AddressSpace* memory = nullptr;
  cpython::Machine machine = cpython::Machine::kX86_64;
};

// The thread id a walk resumed after a perf trampoline goes by: no kernel gives it (pid_max is
// at most 2^22).
constexpr int64_t kResumedWalkId = 0x7ffffff0;
constexpr size_t kMaxTrampolineSteps = 4096;

int on_thread(Dwfl_Thread* thread, void* arg) noexcept {
  auto* all = static_cast<AllThreads*>(arg);
  try {
    ThreadWalk& walk = all->walks[dwfl_thread_tid(thread)];
    walk.max_frames = all->max_frames;
    walk.memory = all->memory;
    walk.machine = all->machine;
    const int result = dwfl_thread_getframes(thread, on_frame, &walk);
    // -1 is how every walk ends that reaches a frame libdwfl cannot unwind further; a thread's
    // outermost frame (clone3, _start) has no caller to unwind to, so that is no error by itself.
    if (result == -1 && !walk.end_reason && walk.frames.empty() && !walk.resume)
      walk.end_reason = dwfl_message();
    return DWARF_CB_OK;
  } catch (...) {
    return DWARF_CB_ABORT;
  }
}

}  // namespace

void DwflUnwinder::Impl::walk_all() {
  Current scope(this);
  AllThreads all;
  all.max_frames = options.max_frames;
  all.memory = options.memory;
  if (!options.threads.empty()) all.machine = options.threads.front().machine;
  if (dwfl_getthreads(dwfl.get(), on_thread, &all) < 0 && all.walks.empty()) {
    walk_error = Error{ErrorKind::kInvalidInput, "libdwfl cannot list threads: " + dwfl_message(), std::nullopt};
  }
  // A walk that ends in code made at run time says so (nothing tells how to unwind it).
  for (auto& [lwp, walk] : all.walks) {
    if (!walk.resume && !walk.end_reason && !walk.frames.empty() && walk.frames.back().generated_code)
      walk.end_reason = fmt::format("the walk ends in code made at run time at 0x{:x} (a JIT's: no "
                                    "file, no unwind table)", walk.frames.back().pc);
  }
  // Walks that stopped at a perf trampoline go on from its caller, as a thread of their own whose
  // registers are the caller's (next_thread lists only it while it is walked).
  for (auto& [lwp, walk] : all.walks) {
    for (size_t steps = 0; walk.resume && steps < kMaxTrampolineSteps; ++steps) {
      ThreadRegisters resumed = std::move(*walk.resume);
      walk.resume.reset();
      resumed.lwp = kResumedWalkId;
      options.threads.push_back(resumed);
      const size_t first = first_unwalked;
      first_unwalked = options.threads.size() - 1;
      const size_t before = walk.frames.size();
      const int result = dwfl_getthread_frames(dwfl.get(), static_cast<pid_t>(kResumedWalkId), on_frame, &walk);
      first_unwalked = first;
      options.threads.pop_back();
      if (walk.frames.size() > before) {
        walk.frames[before].after_trampoline = true;
        walk.frames[before].is_activation = false;  // a return address, though libdwfl started there
      } else if (!walk.end_reason) {
        walk.end_reason = fmt::format("cannot unwind past the perf trampoline's caller: {}",
                                      result == -1 ? dwfl_message() : "no frame");
      }
    }
  }
  walked.emplace();
  for (auto& [lwp, walk] : all.walks)
    walked->emplace(lwp, WalkedThread{std::move(walk.frames), std::move(walk.end_reason)});
  first_unwalked = options.threads.size();
}

void DwflUnwinder::Impl::symbolize_all() {
  Current scope(this);
  if (!stacks) stacks.emplace();
  if (!symbolizer) symbolizer.emplace(dwfl.get(), options.inlined_frames);
  std::vector<const std::vector<RawFrame>*> walks;
  for (const auto& [lwp, walk] : *walked) walks.push_back(&walk.frames);
  symbolizer->resolve_symbols(walks);
  for (auto& [lwp, walk] : *walked) {
    NativeStack stack;
    stack.lwp = lwp;
    stack.frames = symbolizer->symbolize(walk.frames);
    stack.end_reason = std::move(walk.end_reason);
    stacks->emplace(lwp, std::move(stack));
  }
  walked->clear();
}

DwflUnwinder::DwflUnwinder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DwflUnwinder::~DwflUnwinder() = default;

Expected<std::unique_ptr<DwflUnwinder>> DwflUnwinder::open(UnwinderOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  if (auto attached = impl->attach(); !attached) return std::unexpected(attached.error());
  return std::unique_ptr<DwflUnwinder>(new DwflUnwinder(std::move(impl)));
}

Expected<std::unique_ptr<NativeUnwinder>> open_unwinder(UnwinderOptions options) {
  auto opened = DwflUnwinder::open(std::move(options));
  if (!opened) return std::unexpected(opened.error());
  return std::unique_ptr<NativeUnwinder>(std::move(*opened));
}

void DwflUnwinder::walk() {
  if (!impl_->walked) impl_->walk_all();
}

void DwflUnwinder::add_threads(std::vector<ThreadRegisters> threads) {
  for (ThreadRegisters& thread : threads) impl_->options.threads.push_back(std::move(thread));
  impl_->walked.reset();
}

Expected<NativeStack> DwflUnwinder::unwind(int64_t lwp) {
  if (!impl_->walked) walk();
  if (!impl_->walked->empty()) impl_->symbolize_all();
  auto it = impl_->stacks->find(lwp);
  if (it != impl_->stacks->end()) return it->second;
  if (impl_->walk_error) return std::unexpected(*impl_->walk_error);
  return make_error(ErrorKind::kNotFound, fmt::format("the core has no thread with LWP {}", lwp));
}

}  // namespace hangpy::native
