#include "gdbplugin/gdb_api.h"

#include "base/printable.h"

#include <fmt/format.h>

#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

int64_t integer_attribute(PyObject* object, const char* name) {
  PyRef value = checked(PyObject_GetAttrString(object, name));
  int64_t result = PyLong_AsLongLong(value.get());
  if (result == -1 && PyErr_Occurred()) throw PythonErrorSet();
  return result;
}

}  // namespace

PyObject* gdb_module() {
  static PyObject* module = nullptr;  // a borrowed-forever reference: gdb never unloads it
  if (!module) module = checked(PyImport_ImportModule("gdb")).release();
  return module;
}

void gdb_write(std::string_view text) {
  if (text.empty()) return;
  // Everything hangpy prints in gdb carries names the inferior gave (threads, files, reprs,
  // source lines): control characters reach the terminal as \xNN, never raw.
  const std::string shown = for_terminal(text, true);
  PyRef string = checked(PyUnicode_DecodeUTF8(shown.data(), static_cast<Py_ssize_t>(shown.size()),
                                              "replace"));
  PyRef args = checked(PyTuple_Pack(1, string.get()));
  gdb_call("write", std::move(args));
}

PyRef gdb_call(const char* name, PyRef args) {
  PyRef function = checked(PyObject_GetAttrString(gdb_module(), name));
  if (!args) args = checked(PyTuple_New(0));
  return checked(PyObject_Call(function.get(), args.get(), nullptr));
}

PyRef selected_inferior() { return gdb_call("selected_inferior"); }

InferiorId selected_inferior_id() {
  PyRef inferior = selected_inferior();
  return InferiorId{integer_attribute(inferior.get(), "num"),
                    integer_attribute(inferior.get(), "pid")};
}

bool selected_inferior_is_local_process() {
  PyRef inferior = selected_inferior();
  PyObject* connection = PyObject_GetAttrString(inferior.get(), "connection");
  if (!connection) {  // a gdb older than 11 has no connections: say nothing about the clock
    if (python_interrupt_pending()) throw PythonErrorSet();
    PyErr_Clear();
    return false;
  }
  PyRef connection_ref = PyRef::steal(connection);
  if (connection == Py_None) return false;
  PyRef type = checked(PyObject_GetAttrString(connection, "type"));
  if (!PyUnicode_Check(type.get())) return false;
  auto text = utf8_of(type.get());
  if (!text) throw PythonErrorSet();
  return *text == "native" && integer_attribute(inferior.get(), "pid") > 0;
}

std::optional<int64_t> selected_thread_lwp() {
  PyRef thread = gdb_call("selected_thread");
  if (thread.get() == Py_None) return std::nullopt;
  // ptid is (pid, lwp, tid); for a core and for a live Linux process alike the lwp is the
  // kernel's thread id, which CPython records as native_thread_id.
  PyRef ptid = checked(PyObject_GetAttrString(thread.get(), "ptid"));
  if (!PyTuple_Check(ptid.get()) || PyTuple_Size(ptid.get()) < 2) return std::nullopt;
  int64_t lwp = PyLong_AsLongLong(PyTuple_GetItem(ptid.get(), 1));
  if (lwp == -1 && PyErr_Occurred()) throw PythonErrorSet();
  if (lwp == 0) return std::nullopt;
  return lwp;
}

std::optional<uint64_t> symbol_address(std::string_view name) {
  std::string expression = fmt::format("(unsigned long)&'{}'", name);
  PyRef args = checked(Py_BuildValue("(s)", expression.c_str()));
  PyRef function = checked(PyObject_GetAttrString(gdb_module(), "parse_and_eval"));
  PyObject* value = PyObject_Call(function.get(), args.get(), nullptr);
  if (!value) {
    if (python_interrupt_pending()) throw PythonErrorSet();
    PyErr_Clear();  // "No symbol ... in current context"
    return std::nullopt;
  }
  PyRef value_ref = PyRef::steal(value);
  PyRef number = checked(PyNumber_Long(value));
  uint64_t address = PyLong_AsUnsignedLongLong(number.get());
  if (PyErr_Occurred()) throw PythonErrorSet();
  if (address == 0) return std::nullopt;
  return address;
}

std::optional<std::string> utf8_of(PyObject* text) {
  PyObject* bytes = PyUnicode_AsUTF8String(text);
  if (!bytes) return std::nullopt;
  PyRef owner = PyRef::steal(bytes);
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(bytes, &data, &size) != 0) return std::nullopt;
  return std::string(data, static_cast<size_t>(size));
}

std::string python_repr(std::string_view text) {
  PyRef string = checked(PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()),
                                              "replace"));
  PyRef repr = checked(PyObject_Repr(string.get()));
  auto utf8 = utf8_of(repr.get());
  if (!utf8) throw PythonErrorSet();
  return *utf8;
}

}  // namespace hangpy::gdbplugin
