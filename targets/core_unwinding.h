// A core's threads unwound by libdwfl (native/unwinder.h) from the registers and memory the
// core saved, each Python thread's frames spliced in where its eval loop runs them: the
// analysis::NativeUnwinding of a CoreTarget. A snapshot's threads come from the stacks it
// recorded instead (it has neither the binaries nor the stack pages an unwinder would read).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "analysis/process_target.h"
#include "native/unwinder.h"
#include "targets/core_target.h"

namespace hangpy::targets {

// Each call walks only the threads no call walked before, in one libdwfl session (the diagnosis
// asks for its vague threads, then for a collective's backend workers). `target` must outlive it.
class CoreUnwinding final : public analysis::NativeUnwinding {
 public:
  CoreUnwinding(const CoreTarget& target, bool inlined_frames);
  ~CoreUnwinding() override;
  native::MergedStacks merged(const cpython::ProcessStacks& stacks, bool all_threads,
                              const std::set<int64_t>* only = nullptr) override;

 private:
  const CoreTarget& target_;
  const bool snapshot_;
  native::UnwinderOptions options_;
  std::map<int64_t, native::NativeStack> recorded_;  // a snapshot's (recorded_stacks.h)
  std::set<int64_t> given_;                          // the LWPs handed to the unwinder
  std::optional<Expected<std::unique_ptr<native::NativeUnwinder>>> opened_;
};

}  // namespace hangpy::targets
