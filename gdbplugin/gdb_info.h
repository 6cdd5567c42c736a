// What gdb knows about its target that gdb 13's Python API does not hand out: the core file's
// path (`info target`), the files mapped in the process (`info proc mappings`: the core's NT_FILE
// note, or /proc/PID/maps) and each thread's fs_base register. The first two are parsed from
// gdb's text; each parser names the lines it reads. Interrupts (Ctrl-C) throw PythonErrorSet;
// gdb's own errors give empty answers.
#pragma once

#include <array>
#include <set>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cpython/target.h"
#include "gdbplugin/python_ref.h"

namespace hangpy::gdbplugin {

// The path of the core file the selected inferior has open; nullopt for a live process.
std::optional<std::string> core_file_path();

struct MappedFile {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string path;
};
// Every file-backed mapping of the selected inferior, in gdb's order.
std::vector<MappedFile> mapped_files();

// fs_base of each of `threads` (gdb.InferiorThread objects) from its registers; 0 where gdb
// cannot read it. gdb reads the registers of its selected thread only, so each thread is
// selected in turn; gdb's selected thread and frame are restored afterwards.
std::vector<uint64_t> fs_base_registers(const std::vector<PyRef>& threads);

// What py-threads and py-deadlock need of each thread beyond memory: the system call it is in
// ($orig_rax, -1 for none, and $rdi, $rsi, $rdx, $r10, $r8, $r9; on an aarch64 core, which
// gdb-multiarch reads, $x8 and $x0-$x5 where `svc #0` is at or before the pc) and the names of its innermost
// native frames from gdb's unwinder (at most `max_frames`; "" for a frame gdb cannot name), for
// the threads in `frames_for` only (unwinding is what costs).
// Each thread is selected in turn; gdb's selection is restored afterwards.
struct ThreadWaitState {
  int64_t lwp = 0;
  int64_t syscall = -1;
  std::array<uint64_t, 6> syscall_arguments{};
  cpython::Machine machine = cpython::Machine::kX86_64;  // whose numbering `syscall` is in
  bool syscall_arguments_lost = false;                    // see cpython::NativeThread
  std::vector<std::string> frame_names;  // innermost first
};
std::vector<ThreadWaitState> thread_wait_states(size_t max_frames, const std::set<int64_t>& frames_for);

}  // namespace hangpy::gdbplugin
