// coreanalyze --native: the core's threads unwound by libdwfl (behind native::NativeUnwinder),
// with each Python thread's frames spliced in where its eval loop runs them.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "targets/core_target.h"
#include "cpython/stacks.h"
#include "native/dwfl_unwinder.h"
#include "report/native_report.h"

namespace hangpy::coreanalyze {

// The merged stack of every Python thread with a known LWP and, with `all_threads`, the native
// stack of every thread that runs no Python. A core libdwfl cannot read gives every thread an
// error instead of a stack. Module files are the ones `target` resolves. `inlined_frames`: also
// the functions inlined at each pc, from DWARF (costly: see native/dwfl_symbolizer.h). `only`:
// the threads to unwind, by LWP (the diagnosis's vague ones, a collective's backend workers), with
// `all_threads` false; all Python threads when null. A snapshot's
// threads come from the stacks it recorded (recorded_native_stacks), the rest are unwound.
native::MergedStacks gather_merged_stacks(const targets::CoreTarget& target, const targets::CoreOptions& options,
                                          const cpython::ProcessStacks& stacks, bool all_threads,
                                          bool inlined_frames, const std::set<int64_t>* only = nullptr);

// The same, for several calls on one core: each walks only the threads not walked before, in one
// libdwfl session (the diagnosis asks for its vague threads, then for a collective's backend
// workers). `target` must outlive it.
class CoreUnwinding {
 public:
  CoreUnwinding(const targets::CoreTarget& target, const targets::CoreOptions& options, bool inlined_frames);
  ~CoreUnwinding();
  native::MergedStacks merged(const cpython::ProcessStacks& stacks, bool all_threads,
                              const std::set<int64_t>* only = nullptr);

 private:
  const targets::CoreTarget& target_;
  const bool snapshot_;
  native::DwflUnwinderOptions options_;
  std::map<int64_t, native::NativeStack> recorded_;  // a snapshot's (recorded_native_stacks)
  std::set<int64_t> given_;                          // the LWPs handed to the unwinder
  std::optional<Expected<std::unique_ptr<native::DwflUnwinder>>> opened_;
};

// The same from an unwinder a shell opened itself (a live process: its memory, registers and
// modules, no core), which may have walked its threads already.
native::MergedStacks merge_native_stacks(Expected<std::unique_ptr<native::DwflUnwinder>>& opened,
                                         const cpython::ProcessStacks& stacks, bool all_threads,
                                         const std::set<int64_t>* only = nullptr);

// The same from any source of one thread's native stack by LWP.
native::MergedStacks merge_native_stacks(const std::function<Expected<native::NativeStack>(int64_t)>& unwind,
                                         const cpython::ProcessStacks& stacks, bool all_threads,
                                         const std::set<int64_t>* only = nullptr);

// The native stacks of `merged` as a snapshot records them (SnapshotProcess::native_stacks).
std::vector<std::byte> recorded_native_stacks(const native::MergedStacks& merged);

}  // namespace hangpy::coreanalyze
