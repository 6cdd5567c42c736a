// An owned reference to a Python object, so that no path through the module leaks or
// double-frees one. Python.h must come first in every file of the module; this header does it.
#pragma once

#define PY_SSIZE_T_CLEAN
// CPython's Stable ABI as of 3.6: one module for the Python of every gdb (Debian 11's 3.9,
// 12's 3.11, 13's 3.13, RHEL 8's 3.6), whatever headers it is built with.
#define Py_LIMITED_API 0x03060000
#include <Python.h>

#include <utility>

namespace hangpy::gdbplugin {

class PyRef {
 public:
  PyRef() = default;
  // Takes over a new reference (what most C API calls return); null stays null.
  static PyRef steal(PyObject* object) { return PyRef(object); }
  // Adds a reference to a borrowed one.
  static PyRef borrow(PyObject* object) {
    Py_XINCREF(object);
    return PyRef(object);
  }
  PyRef(const PyRef& other) : object_(other.object_) { Py_XINCREF(object_); }
  PyRef(PyRef&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  PyRef& operator=(PyRef other) noexcept {
    std::swap(object_, other.object_);
    return *this;
  }
  ~PyRef() { Py_XDECREF(object_); }

  PyObject* get() const { return object_; }
  PyObject* release() { return std::exchange(object_, nullptr); }
  explicit operator bool() const { return object_ != nullptr; }

 private:
  explicit PyRef(PyObject* object) : object_(object) {}
  PyObject* object_ = nullptr;
};

}  // namespace hangpy::gdbplugin
