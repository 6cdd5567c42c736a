// How errors travel inside the module and leave it. Inside, code throws one of two types; at the
// module's edge (every function gdb or Python calls) guarded() catches everything, so no C++
// exception ever reaches gdb, and turns it into a Python exception gdb knows how to print:
// gdb.GdbError (one line, no traceback) for our errors, or the Python exception already set.
#pragma once

#include "gdbplugin/python_ref.h"

#include <stdexcept>
#include <string>

namespace hangpy::gdbplugin {

// A failure the user should read: becomes gdb.GdbError with this one line.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

// A Python exception is already set (gdb's KeyboardInterrupt on Ctrl-C, a pager quit, ...):
// leave it as it is.
class PythonErrorSet : public std::exception {
 public:
  const char* what() const noexcept override { return "Python error set"; }
};

// Throws PythonErrorSet when a C API call returned null (an exception is set then).
inline PyRef checked(PyObject* result) {
  if (!result) throw PythonErrorSet();
  return PyRef::steal(result);
}

// The current Python exception's message in one line, and clears it (for gdb.error and
// gdb.MemoryError, which carry gdb's own message). KeyboardInterrupt is never cleared.
std::string take_python_error_message();
bool python_interrupt_pending();

// Runs `body` and converts whatever it throws; returns null with a Python exception set on
// failure, as a C API function must.
template <typename Body>
PyObject* guarded(Body&& body) noexcept;

// Sets gdb.GdbError(message) as the current Python exception (RuntimeError before
// remember_gdb_error_type() ran, which the module's init does first).
void set_gdb_error(const std::string& message) noexcept;
void remember_gdb_error_type(PyObject* gdb_module);

template <typename Body>
PyObject* guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const UserError& error) {
    set_gdb_error(error.what());
  } catch (const PythonErrorSet&) {
    if (!PyErr_Occurred()) set_gdb_error("hangpy: internal error (no Python error was set)");
  } catch (const std::exception& error) {
    set_gdb_error(std::string("hangpy: internal error: ") + error.what());
  } catch (...) {
    set_gdb_error("hangpy: internal error");
  }
  return nullptr;
}

}  // namespace hangpy::gdbplugin
