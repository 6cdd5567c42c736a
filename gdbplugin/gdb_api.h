// The few things the module asks of gdb, through gdb's own Python module (`import gdb`): the
// selected inferior and thread, output, and expression evaluation. Every function throws
// UserError or PythonErrorSet (python_error.h) on failure; none returns a half-result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gdbplugin/python_ref.h"

namespace hangpy::gdbplugin {

// The `gdb` module (imported once; gdb keeps it alive for its whole life).
PyObject* gdb_module();

// Writes to gdb's stdout through its pager; a pager "q" arrives as a Python exception.
void gdb_write(std::string_view text);

// gdb.<name>(args...) for a function of the gdb module; `args` is a new tuple or null.
PyRef gdb_call(const char* name, PyRef args = {});

// The selected inferior: its number and pid (0 when it has no process and no core).
struct InferiorId {
  int64_t number = 0;
  int64_t pid = 0;
  bool operator==(const InferiorId&) const = default;
};
InferiorId selected_inferior_id();
PyRef selected_inferior();

// Whether the selected inferior is a process running on this machine (gdb's "native"
// connection), not a core or a remote target: only then does this machine's clock tell the
// process's time.monotonic().
bool selected_inferior_is_local_process();

// The LWP of gdb's selected thread; nullopt when there is no thread (no process, no core).
std::optional<int64_t> selected_thread_lwp();

// `(unsigned long)&'name'` evaluated by gdb: works with ELF symbols alone (minimal symbols), no
// debug info needed. nullopt when gdb knows no such symbol.
std::optional<uint64_t> symbol_address(std::string_view name);

// Python's repr() of a str, as libpython.py prints names ('x', "it's").
std::string python_repr(std::string_view text);

// A str's UTF-8 text; nullopt with the Python error set when it is none. (PyUnicode_AsUTF8 is
// in the Stable ABI only from 3.10: this goes through a bytes object, which is.)
std::optional<std::string> utf8_of(PyObject* text);

}  // namespace hangpy::gdbplugin
