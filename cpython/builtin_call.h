// Which built-in a thread is calling, named as libpython.py's py-bt names it
// ("<built-in method acquire of _thread.lock object at remote 0x...>", "<method-wrapper
// '__init__' of MyList object at 0x...>"), found without debug info: libpython reads the `func`
// or `wp` variable of cfunction_call / wrapper_call frames; we look for the object itself in the
// native stack between two eval-loop calls, and keep it only when its C function is running.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cpython/function_ranges.h"
#include "cpython/object_reader.h"
#include "cpython/value_stack.h"

namespace hangpy::cpython {

// At most this much native stack is scanned per range: the C frames between two eval-loop calls
// are small; a bigger range is cut (the innermost part is kept).
inline constexpr uint64_t kMaxBuiltinScanBytes = 64 * 1024;
// And this many slots of the calling Python frame's value stack, where the eval loop keeps the
// callable while it calls it: the native stack may hold it in no slot at all (2.7's
// PyCFunction_Call jumps to the C function, which gets no pointer to its own object, and a
// register keeps it only in the eval loop's frame). The depth at the call is not recorded, so the
// slots are read from the bottom; deep expressions are rare in a call that blocks.
inline constexpr uint64_t kValueStackScanSlots = 32;

struct BuiltinCall {
  uint64_t object = 0;  // the builtin_function_or_method or method-wrapper
  std::string line;     // as libpython prints it
  size_t frame = 0;     // the index in `pcs` of the frame running its C function (pcs.size():
                        // not told apart from another candidate's, where no unwind table bounds them)
};

// The built-in calls running in one range of native stack, innermost first: [low, high) are
// stack addresses (the innermost frame's stack pointer up to the eval-loop frame's), `pcs` the
// program counters of the native frames in that range. A candidate counts when one of `pcs` lies
// in the C function it calls (its PyMethodDef's ml_meth; a method-wrapper's wrapper or slot
// function), so a stale pointer left on the stack by an earlier call is not taken. Where a
// function's bounds are found in `ranges` (its module's unwind table) they decide; where not, a
// pc within a guessed span after the function's start counts. `value_stack` (none: not read) is
// the calling Python frame's (value_stack.h); a slot above the stack's top may be stale, so there
// only a module's function counts (sorted(), not a bound method), and only while alive (a freed
// built-in kept on a free list still looks like one). `innermost_registers`, when the range
// holds the thread's innermost frame, are that frame's register values: a breakpoint on a C
// function's first instructions (wrapper_call) finds the called object there and on no stack.
// A method-wrapper's C functions include its type's call slot (wrapper_call).
std::vector<BuiltinCall> find_builtin_calls(const ObjectReader& objects, uint64_t low,
                                            uint64_t high, std::span<const uint64_t> pcs,
                                            const FunctionRanges* ranges,
                                            std::optional<ValueStackWindow> value_stack = std::nullopt,
                                            std::span<const uint64_t> innermost_registers = {});

}  // namespace hangpy::cpython
