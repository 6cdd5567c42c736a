// The state diagnose()'s steps share, and the small questions they ask of it: which thread has
// an ident or an LWP, a frame's self, an object's type or int attribute, whether a thread pointer
// is one of the process's. Internal to diagnosis/.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cpython/layout.h"
#include "cpython/object_reader.h"
#include "cpython/stacks.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/locks.h"

namespace hangpy::diagnosis::detail {

using cpython::PythonThread;

// Everything the per-thread steps share.
struct Context {
  Context(const cpython::ProcessStacks& stacks_in, const cpython::AddressSpace& memory_in,
          const NativeStacks* native_in)
      : stacks(stacks_in), memory(memory_in), layout(*stacks_in.layout),
        objects(memory_in, *stacks_in.layout), locks(objects), native(native_in) {}

  const cpython::ProcessStacks& stacks;
  const cpython::AddressSpace& memory;
  const cpython::Layout& layout;
  cpython::ObjectReader objects;
  LockReader locks;
  std::unordered_map<int64_t, const cpython::NativeThread*> os_threads;  // by LWP
  const NativeStacks* native;
  std::function<std::optional<std::string>(uint64_t)> function_at;
  // The locks every thread's frames and modules reach, read on the first question about a futex
  // (candidate_locks()): a process whose futex waits all have other explanations (a torch rank
  // in a collective its Python frames name, such as barrier()) never reads them; they were a
  // tenth of a DDP rank's default run.
  DiagnosisMemo* memo = nullptr;
  mutable std::optional<std::vector<LockState>> candidates;
  std::vector<std::vector<uint64_t>> held;  // per thread: locks held through `with`
  std::unordered_map<uint64_t, uint64_t> thread_objects;  // threading's Thread objects by ident
  bool gil_known = false;  // a holder or the GIL struct is known: "neither" can be said
  bool native_stacks_follow = false;  // DiagnosisInput::native_stacks_follow
};

std::optional<size_t> thread_by_ident(const Context& context, uint64_t ident);

// The candidate locks (Context::candidates), read and kept in the memo on first use.
const std::vector<LockState>& candidate_locks(const Context& context);

std::optional<size_t> thread_by_lwp(const Context& context, int64_t lwp);

std::optional<int64_t> lwp_of(const Context& context, size_t index);

// `self` of a frame, 0 when it has none.
uint64_t frame_self(const Context& context, const cpython::PythonFrame& frame);

std::string type_name(const Context& context, uint64_t object);

std::optional<uint64_t> int_attribute(const Context& context, uint64_t instance, std::string_view name);

// Whether some thread of the process has this pthread_t (its thread pointer); nullopt when the
// registers do not say (a core without them, threads read in their system calls).
std::optional<bool> thread_pointer_exists(const Context& context, uint64_t pointer);

// Whether the process has no thread but the waiter: then no other thread can release a plain
// Lock it waits for (which records no holder).
bool only_thread(const Context& context);

}  // namespace hangpy::diagnosis::detail
