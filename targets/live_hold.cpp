#include "targets/live_hold.h"

#include <algorithm>

#include <fmt/format.h>

#include "native/unwinder.h"
#include "native/merged_stacks.h"
#include "symbols/elf_file.h"
#include "targets/live_target.h"
#include "targets/thread_pointers.h"

namespace hangpy::targets {
namespace {

class LiveHold final : public analysis::Hold {
 public:
  LiveHold(std::unique_ptr<StoppedProcess> stopped, HoldState& state)
      : stopped_(std::move(stopped)), state_(state) {}

  Threads threads() const override {
    return {stopped_->stopped_count(), stopped_->left_in_syscall().size(), stopped_->left_running()};
  }
  bool timed_out() const override { return stopped_->timed_out(); }
  analysis::HoldFailure timeout_failure() const override { return stopped_->timeout_failure(); }
  std::chrono::nanoseconds release() override {
    state_.released = true;
    return stopped_->release();
  }
  // A thread without Python that woke meanwhile changed no Python stack: no reason to read them
  // all again (an OpenMP pool wakes all the time while its rank computes).
  std::vector<int64_t> moved() const override {
    std::vector<int64_t> moved;
    for (int64_t lwp : stopped_->moved())
      if (!state_.without_python.contains(lwp)) moved.push_back(lwp);
    return moved;
  }
  bool realtime() const override { return stopped_->realtime(); }

 private:
  std::unique_ptr<StoppedProcess> stopped_;
  HoldState& state_;
};

// libdwfl set to unwind every thread from the registers the last hold read and the process's
// memory (walk() while it is held); once it is let go, only the threads the hold left asleep in
// their system calls, whose stacks stay as they were while they sleep.
class LiveUnwinding final : public analysis::NativeUnwinding {
 public:
  LiveUnwinding(const LiveTarget& live, const HoldState& state, bool inlined_frames)
      : only_asleep_(state.released ? std::optional<std::set<int64_t>>(state.asleep) : std::nullopt) {
    native::UnwinderOptions options;
    options.sysroot = fmt::format("/proc/{}/root", live.process().pid);
    options.inlined_frames = inlined_frames;
    options.memory = &live.memory();
    for (const auto& thread : state.dwarf_registers) {
      native::ThreadRegisters registers;
      registers.lwp = thread.lwp;
      registers.machine = cpython::kHostMachine;
      std::copy(thread.dwarf.begin(), thread.dwarf.end(), registers.dwarf.begin());
      options.threads.push_back(registers);
    }
    for (const cpython::MappedModule& module : live.modules())
      options.modules.push_back({module.path, module.start, module.end});
    if (auto vdso = live.vdso()) {
      std::vector<std::byte> image(std::min(native::kMaxVdsoBytes, vdso->end - vdso->start));
      if (live.memory().read(vdso->start, image)) {
        options.vdso_image = std::move(image);
        options.vdso_address = vdso->start;
      }
    }
    options.module_file = [&live](const std::string& recorded_path) { return live.module_file(recorded_path); };
    options.module_elf = [&live](const std::string& recorded_path) -> Elf* {
      const symbols::ElfFile* file = live.module_elf_file(recorded_path);
      return file != nullptr ? file->new_reference() : nullptr;
    };
    options_ = std::move(options);
  }

  void walk() override {
    if (auto& unwinder = opened(); unwinder) (*unwinder)->walk();
  }

  native::MergedStacks merged(const cpython::ProcessStacks& stacks, bool all_threads,
                              const std::set<int64_t>* only) override {
    std::set<int64_t> still;
    if (only_asleep_) {
      for (int64_t lwp : *only_asleep_)
        if (only == nullptr || only->contains(lwp)) still.insert(lwp);
      if (still.empty()) return {};
      only = &still;
      all_threads = false;
    }
    auto unwind = [this](int64_t lwp) -> Expected<native::NativeStack> {
      auto& unwinder = opened();
      if (!unwinder) return std::unexpected(unwinder.error());
      return (*unwinder)->unwind(lwp);
    };
    return native::merge_native_stacks(unwind, stacks, all_threads, only);
  }

 private:
  // Opened on first need: the diagnosis may find none of its threads asleep.
  Expected<std::unique_ptr<native::NativeUnwinder>>& opened() {
    if (!opened_) opened_ = native::open_unwinder(std::move(options_));
    return *opened_;
  }

  std::optional<std::set<int64_t>> only_asleep_;
  native::UnwinderOptions options_;
  std::optional<Expected<std::unique_ptr<native::NativeUnwinder>>> opened_;
};

}  // namespace

LiveTarget::LiveTarget() : hold_state_(std::make_unique<HoldState>()) {}
LiveTarget::~LiveTarget() = default;

const HoldState* LiveTarget::last_hold() const { return hold_state_->held ? hold_state_.get() : nullptr; }

// The warm pass: it opened the binaries, found their symbols and read every page the stacks
// need. While the process is held those pages are read anew, in a few system calls; the details'
// pages (locals, the diagnosis) are read after it is let go, from the pages read while it was
// held (a page the warm pass did not keep is read from the running process).
void LiveTarget::prepare_hold(const cpython::ProcessStacks& first, bool stop_every_thread,
                              const std::function<void()>& read_details) {
  HoldState& state = *hold_state_;
  std::set<int64_t> python;
  std::vector<KnownThread> known;  // pthread_t and LWP: where glibc keeps the one in the other
  bool every_id_known = true;
  for (const auto& thread : first.threads) {
    state.thread_pointers.push_back(thread.thread_id);
    if (thread.native_thread_id) {
      python.insert(*thread.native_thread_id);
      known.push_back({thread.thread_id, static_cast<int64_t>(*thread.native_thread_id)});
    } else {
      every_id_known = false;
    }
  }
  // An id that is none of the process's threads (a namespace's id that could not be matched)
  // leaves the thread that runs it unknown: then every thread is stopped, none left running.
  const std::vector<cpython::NativeThread> natives = threads();
  std::set<int64_t> lwps;
  for (const cpython::NativeThread& thread : natives) lwps.insert(thread.lwp);
  const bool every_id_matched =
      std::all_of(python.begin(), python.end(), [&](int64_t id) { return lwps.contains(id); });
  if (every_id_known && every_id_matched && !stop_every_thread && !first.threads.empty()) {
    for (const cpython::NativeThread& thread : natives)
      if (!python.contains(thread.lwp)) state.without_python.insert(thread.lwp);
  }
  // The pages of the stacks: what the hold reads anew. The details' are read after the release:
  // reading them while held too would lengthen it by as many pages again.
  const std::vector<uint64_t> stack_pages = kept_pages();
  stop_noting_readers();
  state.pthread_offset = pthread_tid_offset(*this, known);
  read_details();
  state.thread_pointer_of_lwp = thread_pointers_by_lwp(*this, state.thread_pointers, state.pthread_offset);
  keep_only(stack_pages);
}

std::expected<std::unique_ptr<analysis::Hold>, analysis::HoldFailure> LiveTarget::hold(
    const analysis::HoldOptions& options) {
  HoldState& state = *hold_state_;
  // The pages read for threads left asleep alone are read anew before the stop, the rest in it.
  // The walk named each thread by its LWP, or before 3.11 by its pthread_t (attribute_reads).
  auto read_for_asleep = [this, &state](const std::set<int64_t>& asleep) {
    std::set<int64_t> names = asleep;
    for (const auto& [lwp, pthread] : state.thread_pointer_of_lwp)
      if (asleep.contains(lwp)) names.insert(static_cast<int64_t>(pthread));
    refresh_memory_read_for(names);
  };
  auto stop = StoppedProcess::stop(static_cast<int>(process().pid), options.max_stop, state.without_python,
                                   options.realtime, read_for_asleep);
  if (!stop) return std::unexpected(stop.error());
  std::unique_ptr<StoppedProcess> stopped = std::move(*stop);
  state.held = true;
  state.released = false;
  state.dwarf_registers = stopped->dwarf_registers();
  state.register_sets = stopped->register_sets();
  state.asleep.clear();
  for (const BlockedThread& thread : stopped->left_in_syscall()) state.asleep.insert(thread.registers.lwp);
  if (!stopped->timed_out()) {
    std::vector<cpython::NativeThread> stopped_threads = stopped->threads();
    fill_thread_pointers(*this, state.thread_pointers, stopped_threads, state.pthread_offset,
                         state.thread_pointer_of_lwp);
    set_registers(std::move(stopped_threads));
    refresh_memory();
  }
  return std::make_unique<LiveHold>(std::move(stopped), state);
}

std::unique_ptr<analysis::NativeUnwinding> LiveTarget::native_unwinding(bool inlined_frames) const {
  if (!hold_state_->held) return nullptr;  // no registers but /proc's: read as it ran
  return std::make_unique<LiveUnwinding>(*this, *hold_state_, inlined_frames);
}

}  // namespace hangpy::targets
