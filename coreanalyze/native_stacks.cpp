#include "coreanalyze/native_stacks.h"

#include <elf.h>

#include <algorithm>

#include "targets/core_file.h"

#include "native/dwfl_unwinder.h"
#include "native/recorded_stacks.h"
#include "native/splice.h"

namespace hangpy::coreanalyze {
using namespace ::hangpy::targets;
namespace {

// The vDSO's image, from its mapping in the core (AT_SYSINFO_EHDR says where; the kernel and gcore
// both save it).
constexpr uint64_t kMaxVdsoBytes = 64 * 1024;

void add_vdso(const CoreFile& core, native::DwflUnwinderOptions& options) {
  const std::optional<uint64_t> address = core.auxv_value(AT_SYSINFO_EHDR);
  if (!address) return;
  const CoreSegment* segment = core.segment_containing(*address);
  if (segment == nullptr) return;
  std::vector<std::byte> image(std::min(kMaxVdsoBytes, segment->vaddr + segment->memsz - *address));
  if (!core.read(*address, image)) return;
  options.vdso_image = std::move(image);
  options.vdso_address = *address;
}

// NT_PRSTATUS registers in the DWARF numbering of the core's machine, which libdwfl unwinds with.
native::ThreadRegisters dwarf_registers(const CoreThread& thread) {
  native::ThreadRegisters out;
  out.lwp = thread.lwp;
  out.machine = thread.registers.machine;
  out.dwarf = thread.registers.dwarf();
  return out;
}

// The thread's native stack with, for a Python thread, its Python frames spliced in.
native::MergedStack merged_stack(const Expected<native::NativeStack>& stack, int64_t lwp,
                                 const cpython::PythonThread* thread,
                                 std::string_view eval_loop_function) {
  native::MergedStack merged;
  merged.lwp = lwp;
  if (!stack) {
    merged.error = stack.error().describe();
    return merged;
  }
  merged.end_reason = stack->end_reason;
  merged.unwound = stack->frames;
  if (thread != nullptr) {
    merged.frames = native::splice(stack->frames, *thread, eval_loop_function);
  } else {
    for (const native::NativeFrame& frame : stack->frames)
      merged.frames.push_back(native::MergedFrame{frame, std::nullopt});
  }
  return merged;
}

}  // namespace

CoreUnwinding::CoreUnwinding(const CoreTarget& target, const CoreOptions& options, bool inlined_frames)
    : target_(target), snapshot_(target.core().snapshot_symbols().has_value()) {
  options_.core_path = options.core_path;
  options_.sysroot = options.sysroot;
  options_.inlined_frames = inlined_frames;
  options_.memory = &target.memory();
  for (const cpython::MappedModule& module : target.modules())
    options_.modules.push_back({module.path, module.start, module.end});
  add_vdso(target.core(), options_);
  options_.module_file = [&target](const std::string& recorded_path) { return target.module_file(recorded_path); };
  // A snapshot's recorded stacks stand for its threads: it has neither the binaries nor the stack
  // pages an unwinder would read, so a thread it did not record has no native stack (and a
  // snapshot written from it records the same stacks again: it stays a fixed point).
  if (const auto& note = target.core().snapshot_native_stacks()) {
    if (auto decoded = native::decode_native_stacks(*note)) {
      for (native::NativeStack& stack : *decoded) recorded_[stack.lwp] = std::move(stack);
    }
  }
}

CoreUnwinding::~CoreUnwinding() = default;

native::MergedStacks CoreUnwinding::merged(const cpython::ProcessStacks& stacks, bool all_threads,
                                           const std::set<int64_t>* only) {
  // Only the threads asked for are walked (and their frames named): a torch process has a hundred
  // threads of OpenMP's and CUDA's that the diagnosis of its few vague ones does not need. Those
  // asked for later are walked in the same session.
  std::vector<native::ThreadRegisters> more;
  for (const CoreThread& thread : target_.core().threads()) {
    if (!all_threads && only != nullptr && !only->contains(thread.lwp)) continue;
    if (recorded_.contains(thread.lwp) || !given_.insert(thread.lwp).second) continue;
    more.push_back(dwarf_registers(thread));
  }
  if (!snapshot_ && !more.empty()) {
    if (!opened_) {
      options_.threads = std::move(more);
      opened_ = native::DwflUnwinder::open(options_);
    } else if (*opened_) {
      (**opened_)->add_threads(std::move(more));
    }
  }
  auto unwind = [&](int64_t lwp) -> Expected<native::NativeStack> {
    if (auto found = recorded_.find(lwp); found != recorded_.end()) return found->second;
    if (snapshot_) {
      return make_error(ErrorKind::kNotFound,
                        "the snapshot recorded no native stack of this thread (take it with --native "
                        "to record them all)");
    }
    if (!opened_) return make_error(ErrorKind::kNotFound, "the core has no such thread");
    if (!*opened_) return std::unexpected(opened_->error());
    return (**opened_)->unwind(lwp);
  };
  return merge_native_stacks(unwind, stacks, all_threads, only);
}

native::MergedStacks gather_merged_stacks(const CoreTarget& target, const CoreOptions& options,
                                          const cpython::ProcessStacks& stacks, bool all_threads,
                                          bool inlined_frames, const std::set<int64_t>* only) {
  return CoreUnwinding(target, options, inlined_frames).merged(stacks, all_threads, only);
}

native::MergedStacks merge_native_stacks(Expected<std::unique_ptr<native::DwflUnwinder>>& opened,
                                         const cpython::ProcessStacks& stacks, bool all_threads,
                                         const std::set<int64_t>* only) {
  auto unwind = [&opened](int64_t lwp) -> Expected<native::NativeStack> {
    if (!opened) return std::unexpected(opened.error());
    return (*opened)->unwind(lwp);
  };
  return merge_native_stacks(unwind, stacks, all_threads, only);
}

std::vector<std::byte> recorded_native_stacks(const native::MergedStacks& merged) {
  std::vector<native::NativeStack> stacks;
  for (const auto& [lwp, stack] : merged) {
    if (stack.error) continue;  // nothing was unwound: the reader may try again
    stacks.push_back(native::NativeStack{lwp, stack.unwound, stack.end_reason});
  }
  return native::encode_native_stacks(stacks);
}

native::MergedStacks merge_native_stacks(const std::function<Expected<native::NativeStack>(int64_t)>& unwind,
                                         const cpython::ProcessStacks& stacks, bool all_threads,
                                         const std::set<int64_t>* only) {
  const std::string_view eval_loop = stacks.layout ? stacks.layout->eval_loop_function : "";
  native::MergedStacks merged;
  for (const cpython::PythonThread& thread : stacks.threads) {
    if (!thread.native_thread_id) continue;
    const auto lwp = static_cast<int64_t>(*thread.native_thread_id);
    if (only != nullptr && !only->contains(lwp)) continue;
    merged[lwp] = merged_stack(unwind(lwp), lwp, &thread, eval_loop);
  }
  if ((all_threads || only != nullptr) && stacks.threads_without_python) {
    for (int64_t lwp : *stacks.threads_without_python) {
      if (!all_threads && !only->contains(lwp)) continue;
      merged[lwp] = merged_stack(unwind(lwp), lwp, nullptr, eval_loop);
    }
  }
  return merged;
}

}  // namespace hangpy::coreanalyze
