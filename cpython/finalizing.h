// Whether the interpreter is shutting down (Py_Finalize has passed the point where it records the
// finalizing thread): module teardown, __del__ methods and daemon threads that can no longer take
// the GIL. Read from the runtime as the layout table says; some versions cannot tell.
#pragma once

#include <cstdint>
#include <optional>

#include "cpython/layout.h"
#include "cpython/target.h"

namespace hangpy::cpython {

// The finalizing thread state, 0 when the interpreter is not finalizing; nullopt when the layout
// has no such field, its symbol is missing or the memory cannot be read. `runtime` is the address
// of layout.runtime.symbol as the analysis found it.
std::optional<uint64_t> read_finalizing_thread_state(const Target& target, const Layout& layout,
                                                     uint64_t runtime);

}  // namespace hangpy::cpython
