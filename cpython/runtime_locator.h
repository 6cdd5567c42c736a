// Where a layout's runtime lives (the struct or variable the interpreter list hangs off): by
// symbol; else through the exported function that reads it; else by searching the writable data
// of the interpreter's files for a word that leads to an interpreter whose thread states point
// back at it (stripped static binaries, embedded interpreters).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cpython/layout.h"
#include "cpython/target.h"

namespace hangpy::cpython {

struct RuntimeLocation {
  uint64_t address = 0;
  std::string found_by;  // "symbol _PyRuntime", "PyInterpreterState_Head", "search of data"
};

std::optional<RuntimeLocation> locate_runtime(const Target& target, const Layout& layout);

// 3.13 on: _PyRuntime starts with the _Py_DebugOffsets cookie "xdebugpy"; its address when a
// search of the interpreter's writable data finds one, for versions no table describes.
std::optional<uint64_t> find_debug_offsets_cookie(const Target& target);

// Whether `runtime` under `layout` leads to an interpreter whose first thread states point back
// at it: the test a searched candidate must pass.
bool runtime_is_plausible(const AddressSpace& memory, const Layout& layout, uint64_t runtime);
// The same test given the interpreter the runtime's list starts with.
bool interpreter_is_plausible(const AddressSpace& memory, const Layout& layout, uint64_t interpreter);

}  // namespace hangpy::cpython
