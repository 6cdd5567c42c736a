// A thread's native (machine-code) stack as plain data: what an unwinder found, frame by frame,
// and how it found each frame. No handles into the unwinder that made it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hangpy::native {

// How a frame was found (breakpad's "trust"): the thread's registers, the caller's call-frame
// information (.eh_frame/.debug_frame), or the caller's saved frame pointer (a guess that CFI
// would not need).
// How a frame was found: the thread's registers, its callee's CFI, the frame-pointer chain, or by
// stepping over a CPython perf trampoline (-X perf: a few instructions copied into anonymous
// memory, with no unwind table).
enum class FrameHow { kInitial, kCfi, kFramePointer, kTrampoline };

const char* frame_how_name(FrameHow how);  // "initial", "cfi", "frame_pointer", "trampoline"

struct NativeFrame {
  uint64_t pc = 0;  // the frame's program counter (a return address for every frame but the first)
  uint64_t sp = 0;  // the stack pointer in this frame (the callee's CFA on x86-64)
  FrameHow how = FrameHow::kInitial;
  std::string module;  // the mapped file as the target recorded it; empty when unknown
  std::string symbol;  // mangled, as the symbol table or DWARF names it; empty when unknown
  uint64_t offset = 0;  // pc minus the symbol's start (0 for an inlined frame)
  uint64_t module_offset = 0;  // pc minus the module's load address, for frames with no symbol
  // A function the compiler inlined into the next (outer) frame: it shares that frame's pc and sp.
  bool inlined = false;
  // The source line of the pc (for an inlined frame's caller, of the inlined call) where the
  // module's DWARF is found locally (a -dbg package, /usr/lib/debug/.build-id); 0 without.
  std::string source_file{};
  int source_line = 0;
};

// What a perf trampoline frame is called: its code is in anonymous memory, with no symbol.
inline constexpr const char* kPerfTrampolineName = "[Python perf trampoline]";
// What a frame in code made at run time is called (CPython's JIT from 3.13, or another JIT): it
// has no file, no symbol and no unwind table, so a walk usually ends there.
inline constexpr const char* kGeneratedCodeName = "[generated code: JIT]";

struct NativeStack {
  int64_t lwp = 0;
  std::vector<NativeFrame> frames;  // innermost first
  // Why the walk ended before the thread's first frame (an unwinder error, a repeated frame, the
  // frame cap); nullopt when it ended normally or the unwinder cannot tell.
  std::optional<std::string> end_reason;
};

}  // namespace hangpy::native
