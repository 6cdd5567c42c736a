#include "gdbplugin/python_error.h"

#include "gdbplugin/gdb_api.h"

namespace hangpy::gdbplugin {

bool python_interrupt_pending() {
  return PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt);
}

std::string take_python_error_message() {
  if (!PyErr_Occurred()) return "unknown error";
  if (python_interrupt_pending()) throw PythonErrorSet();
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyRef type_ref = PyRef::steal(type), value_ref = PyRef::steal(value),
        traceback_ref = PyRef::steal(traceback);
  std::string message = "unknown error";
  if (value) {
    PyRef text = PyRef::steal(PyObject_Str(value));
    if (text) {
      if (auto utf8 = utf8_of(text.get())) message = *utf8;
    }
  }
  PyErr_Clear();  // anything the conversion itself raised
  // One line: gdb's messages sometimes carry a trailing newline.
  while (!message.empty() && (message.back() == '\n' || message.back() == '.')) message.pop_back();
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  return message;
}

namespace {
PyObject* gdb_error_type = nullptr;  // gdb.GdbError, kept for the module's whole life
}  // namespace

void remember_gdb_error_type(PyObject* gdb) {
  if (!gdb_error_type) gdb_error_type = PyObject_GetAttrString(gdb, "GdbError");
  if (!gdb_error_type) throw PythonErrorSet();
}

void set_gdb_error(const std::string& message) noexcept {
  // No import here: this runs in any context gdb calls us from, and with an exception pending.
  PyErr_SetString(gdb_error_type ? gdb_error_type : PyExc_RuntimeError, message.c_str());
}

}  // namespace hangpy::gdbplugin
