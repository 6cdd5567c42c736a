// An owned reference to a Python object, so that no path through the module leaks or
// double-frees one. Python.h must come first in every file of the module; this header does it.
#pragma once

#define PY_SSIZE_T_CLEAN
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
