// The interface every native unwinder of hangpy implements, and what opens one: libdwfl over a
// core file or a stopped live process today (native/dwfl_unwinder.h, which no shell names: they
// call open_unwinder). gdb has its own unwinder, behind analysis::NativeUnwinding.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

typedef struct Elf Elf;  // libelf.h

#include "base/error.h"
#include "cpython/address_space.h"
#include "cpython/target.h"
#include "native/native_frame.h"

namespace hangpy::native {

// The host file that stands for a module the core recorded at `recorded_path`; nullopt when
// there is none (libdwfl then uses what the core itself holds of the module, if anything).
using ModuleFileFinder = std::function<std::optional<std::string>(const std::string& recorded_path)>;

// libelf's descriptor of that file as the shell already holds it, as a new reference the caller
// ends (elf_end), or nullptr: libdwfl then reads the shell's mapping of the file instead of
// opening and mapping it a second time.
using ModuleElfSharer = std::function<Elf*(const std::string& recorded_path)>;

// A thread's registers at the time of the core, in the DWARF numbering of its machine:
//   x86-64: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, then the pc (the return-address
//           column, 16);
//   aarch64: x0-x30, sp (31), then the pc (kept at 32: aarch64 has no DWARF number for it).
struct ThreadRegisters {
  int64_t lwp = 0;
  std::array<uint64_t, 33> dwarf{};
  cpython::Machine machine = cpython::Machine::kX86_64;
  // Only the stack pointer and the pc are known (a live thread read in its system call without
  // stopping it): the others stay undefined, so that a frame whose CFI needs one ends the walk
  // instead of going on from a made-up value.
  bool only_pc_and_sp = false;

  // How many of `dwarf` libdwfl is given from 0 (the pc is given apart), and where sp and pc are.
  unsigned count() const { return machine == cpython::Machine::kAarch64 ? 32 : 17; }
  unsigned sp_index() const { return machine == cpython::Machine::kAarch64 ? 31 : 7; }
  unsigned pc_index() const { return machine == cpython::Machine::kAarch64 ? 32 : 16; }
};

// A module of the core: the file it recorded at `recorded_path`, mapped at [start, end).
struct ReportedModule {
  std::string recorded_path;
  uint64_t start = 0;
  uint64_t end = 0;
};

// The most of a vDSO's image handed to the unwinder: the kernel's is a page or two.
inline constexpr uint64_t kMaxVdsoBytes = 64 * 1024;

// What an unwinder is opened over: a core file, or a process's memory, threads and modules.
struct UnwinderOptions {
  // Empty for a live process: then memory, threads and modules below must all be given.
  std::string core_path;
  ModuleFileFinder module_file;
  ModuleElfSharer module_elf;  // optional: with module_file, the file's descriptor to share
  // Separate debug files are looked up by build-id under sysroot + /usr/lib/debug/.build-id first,
  // then where elfutils looks by default (/usr/lib/debug, .gnu_debuglink next to the file).
  std::string sysroot;
  // Also name the functions inlined at each pc, from DWARF: reads each module's whole debug info
  // (see native/dwfl_symbolizer.h for the cost), so only when asked.
  bool inlined_frames = false;
  size_t max_frames = 512;
  // The shell's own view of the core: its memory (core segments, with mapped files where the core
  // saved no page) and its threads. Given both, libdwfl reads the stacks through `memory` and
  // starts each thread from `threads`; else it reads the core itself (dwfl_core_file_attach),
  // which scans every program header of the core on every read — on a PyTorch core (~1,000
  // segments) a fifth of --native's time.
  const cpython::AddressSpace* memory = nullptr;  // outlives the unwinder
  std::vector<ThreadRegisters> threads;
  // The core's modules as the shell knows them. Given, libdwfl opens a module's file (through
  // module_file) only when a frame lands in it; else it reads the core's module list itself
  // (dwfl_core_file_report), opening every mapped file (some 300 on a PyTorch core).
  std::vector<ReportedModule> modules;
  // With `modules`: the vDSO's image read from the core and its address (it has no file; its
  // CFI unwinds a thread stopped in it). Empty when unknown.
  std::vector<std::byte> vdso_image;  // at most kMaxVdsoBytes
  uint64_t vdso_address = 0;  // per thread; a deeper walk ends with an end_reason
};

class NativeUnwinder {
 public:
  virtual ~NativeUnwinder() = default;
  // Walks every thread's stack now, through the memory and registers as they are at this call;
  // the frames' symbols are looked up later, on the first unwind(). A live process need be
  // held only for this. (unwind() calls it when it has not been.)
  virtual void walk() = 0;
  // The native stack of OS thread `lwp`, innermost frame first. A walk that stops early still
  // returns the frames it found, with the reason in NativeStack::end_reason. Errors: kNotFound
  // (no such thread), kInvalidInput/kIo (the unwinder cannot read the target at all).
  virtual Expected<NativeStack> unwind(int64_t lwp) = 0;
  // More threads to unwind (a diagnosis that needs a collective's backend workers after its
  // vague threads), walked on the next unwind().
  virtual void add_threads(std::vector<ThreadRegisters> threads) = 0;
};

// libdwfl's (dwfl_unwinder.cpp). Errors: kIo (the core cannot be opened), kInvalidInput (libdwfl
// does not take it as a core).
Expected<std::unique_ptr<NativeUnwinder>> open_unwinder(UnwinderOptions options);

}  // namespace hangpy::native
