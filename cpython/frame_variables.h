// Variables of a Python frame, for py-locals, py-print and py-bt-full: names from the code object,
// values as short, bounded reprs read from the target (like libpython.py's, never running code).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cpython/address_space.h"
#include "cpython/layout.h"
#include "cpython/object_repr.h"
#include "cpython/stacks.h"

namespace hangpy::cpython {

// libpython.py's MAX_OUTPUT_LEN: a longer repr is cut and ends "...(truncated)".
inline constexpr size_t kMaxReprLength = 1024;
// No repr reads more of the target than this, however big or deep the object: reads past it fail
// and the repr shows what was read by then.
inline constexpr size_t kMaxBytesReadPerValue = 256 * 1024;

struct Variable {
  std::string name;
  std::string repr;     // "42", "'text'", "<Widget object at 0x7f...>", "<unreadable at 0x...>"
  uint64_t object = 0;  // the PyObject address; 0 for an unbound local
};

enum class Scope { kLocal, kGlobal, kBuiltin };

struct FoundVariable {
  Scope scope;
  Variable variable;
};

// Which of a frame's slots are its variables: all (cells and free variables by value, as Python's
// f_locals has them), or only the plain locals, as libpython.py lists them (co_nlocals).
enum class SlotsShown { kAll, kPlainLocals };

class VariableReader {
 public:
  VariableReader(const AddressSpace& memory, const Layout& layout,
                 RepeatedObjects repeated = RepeatedObjects::kPython,
                 SlotsShown shown = SlotsShown::kAll);

  // The frame's local variables (arguments first, then other locals, cells by value), in the
  // code object's order; unbound ones are left out.
  Expected<std::vector<Variable>> locals(const PythonFrame& frame) const;
  // The same with their reprs written as one (libpython's frame line): under libpython's rule an
  // object one variable's repr wrote is elided in the next ones'.
  Expected<std::vector<Variable>> locals_as_one_repr(const PythonFrame& frame) const;
  // `name` looked up the way Python does: locals, then the frame's globals, then builtins.
  // nullopt when it is none of them. Without a repr (kObjectOnly) only the slots' pointers and
  // names are read, no local's contents: what a snapshot keeps is what the analysis read, and a
  // diagnosis that wants `self` must not read the other locals' values (a secret, say).
  enum class Want { kRepr, kObjectOnly };
  Expected<std::optional<FoundVariable>> lookup(const PythonFrame& frame, std::string_view name,
                                                Want want = Want::kRepr) const;
  // A bounded repr of any object; never fails (an unreadable object reads "<unreadable ...>").
  std::string repr(uint64_t object, size_t max_length = kMaxReprLength) const;

 private:
  Expected<std::vector<Variable>> slot_values(const PythonFrame& frame, Want want) const;

  const AddressSpace& memory_;
  const Layout& layout_;
  RepeatedObjects repeated_;
  SlotsShown shown_;
};

}  // namespace hangpy::cpython
