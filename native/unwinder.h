// The interface every native unwinder of hangpy implements: libdwfl over a core file or a
// stopped live process today (native/dwfl_unwinder.h); gdb's own unwinder may plug in beside it.
// The shells open a DwflUnwinder (the one implementation, so they name it to open it) and use
// what this interface gives.
#pragma once

#include <cstdint>

#include "base/error.h"
#include "native/native_frame.h"

namespace hangpy::native {

class NativeUnwinder {
 public:
  virtual ~NativeUnwinder() = default;
  // The native stack of OS thread `lwp`, innermost frame first. A walk that stops early still
  // returns the frames it found, with the reason in NativeStack::end_reason. Errors: kNotFound
  // (no such thread), kInvalidInput/kIo (the unwinder cannot read the target at all).
  virtual Expected<NativeStack> unwind(int64_t lwp) = 0;
};

}  // namespace hangpy::native
