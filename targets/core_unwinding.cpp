#include "targets/core_unwinding.h"

#include <elf.h>

#include <algorithm>

#include "native/merged_stacks.h"
#include "native/recorded_stacks.h"
#include "symbols/elf_file.h"
#include "targets/core_file.h"

namespace hangpy::targets {
namespace {

// The vDSO's image, from its mapping in the core (AT_SYSINFO_EHDR says where; the kernel and gcore
// both save it).
void add_vdso(const CoreFile& core, native::UnwinderOptions& options) {
  const std::optional<uint64_t> address = core.auxv_value(AT_SYSINFO_EHDR);
  if (!address) return;
  const CoreSegment* segment = core.segment_containing(*address);
  if (segment == nullptr) return;
  std::vector<std::byte> image(std::min(native::kMaxVdsoBytes, segment->vaddr + segment->memsz - *address));
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

}  // namespace

CoreUnwinding::CoreUnwinding(const CoreTarget& target, bool inlined_frames)
    : target_(target), snapshot_(target.core().snapshot_symbols().has_value()) {
  options_.core_path = target.options().core_path;
  options_.sysroot = target.options().sysroot;
  options_.inlined_frames = inlined_frames;
  options_.memory = &target.memory();
  for (cpython::MappedModule& module : target.modules())
    options_.modules.push_back({std::move(module.path), module.start, module.end});
  add_vdso(target.core(), options_);
  options_.module_file = [&target](const std::string& recorded_path) { return target.module_file(recorded_path); };
  // libdwfl reads the files through the target's own descriptors: each is opened and mapped once.
  options_.module_elf = [&target](const std::string& recorded_path) -> Elf* {
    const symbols::ElfFile* file = target.module_elf_file(recorded_path);
    return file != nullptr ? file->new_reference() : nullptr;
  };
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
      opened_ = native::open_unwinder(std::move(options_));  // opened once: options_ is done with
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
  return native::merge_native_stacks(unwind, stacks, all_threads, only);
}

std::unique_ptr<analysis::NativeUnwinding> CoreTarget::native_unwinding(bool inlined_frames) const {
  return std::make_unique<CoreUnwinding>(*this, inlined_frames);
}

}  // namespace hangpy::targets
