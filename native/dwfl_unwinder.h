// libdwfl (elfutils) over a core file or a stopped live process, behind hangpy's NativeUnwinder
// interface (open_unwinder, unwinder.h, opens it: no shell names it). The module files are the ones the shell's own path resolution found (sysroot,
// lib-path, build-id check), handed to libdwfl through its find_elf callback; libdwfl never
// searches for binaries by itself.
#pragma once

#include <cstdint>
#include <memory>

#include "base/error.h"
#include "native/unwinder.h"

namespace hangpy::native {

class DwflUnwinder final : public NativeUnwinder {
 public:
  // Errors: kIo (the core cannot be opened), kInvalidInput (libdwfl does not take it as a core).
  static Expected<std::unique_ptr<DwflUnwinder>> open(UnwinderOptions options);
  ~DwflUnwinder() override;

  void walk() override;

  // The first call walks every thread of the core at once (libdwfl leaks a core's state when it
  // is walked thread by thread) and keeps the stacks; later calls answer from them.
  Expected<NativeStack> unwind(int64_t lwp) override;

  // The next unwind() walks them, and only them, in the same libdwfl session, so modules, symbol
  // tables and named pcs are not read again.
  void add_threads(std::vector<ThreadRegisters> threads) override;

 private:
  struct Impl;
  explicit DwflUnwinder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hangpy::native
