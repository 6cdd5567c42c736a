#include "gdbplugin/frame_filter.h"

#include "gdbplugin/analysis_cache.h"
#include "cpython/eval_groups.h"
#include "gdbplugin/gdb_api.h"
#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {

extern const char* const kFrameFilterSource;  // frame_filter.py, embedded at build time

namespace {

PyRef frame_tuple(const cpython::PythonFrame& frame) {
  return checked(Py_BuildValue("(ssi)", frame.qualname.c_str(), frame.file.c_str(),
                               frame.line.value_or(0)));
}

// The selected thread's Python frames as a list of groups (lists of (function, file, line)),
// one group per eval-loop call, innermost first; None when the thread runs no Python.
PyObject* python_frame_groups(PyObject*, PyObject*) {
  return guarded([]() -> PyObject* {
    ThreadContext context = Session::instance().current_thread();
    if (!context.thread || context.thread->frames.empty()) Py_RETURN_NONE;
    const auto& frames = context.thread->frames;
    PyRef groups = checked(PyList_New(0));
    for (const cpython::FrameRange& range : cpython::eval_loop_groups(*context.thread)) {
      PyRef group = checked(PyList_New(0));
      for (size_t i = range.begin; i < range.end; ++i) {
        if (PyList_Append(group.get(), frame_tuple(frames[i]).get()) != 0) throw PythonErrorSet();
      }
      if (PyList_Append(groups.get(), group.get()) != 0) throw PythonErrorSet();
    }
    return groups.release();
  });
}

// The name of the C function that runs Python frames in this process's CPython.
PyObject* eval_loop_function(PyObject*, PyObject*) {
  return guarded([]() -> PyObject* {
    ThreadContext context = Session::instance().current_thread();
    if (!context.analysis || !context.analysis->stacks) Py_RETURN_NONE;
    const std::string_view name = context.analysis->stacks->layout->eval_loop_function;
    return checked(PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size())))
        .release();
  });
}

PyMethodDef kHelpers[] = {
    {"_python_frame_groups", python_frame_groups, METH_NOARGS, nullptr},
    {"_eval_loop_function", eval_loop_function, METH_NOARGS, nullptr},
};

}  // namespace

namespace {

PyRef our_filter() {
  PyRef filters = checked(PyObject_GetAttrString(gdb_module(), "frame_filters"));
  PyObject* filter = PyDict_GetItemString(filters.get(), "hangpy-python-frames");  // borrowed
  if (!filter) throw UserError("hangpy: the frame filter was removed from gdb.frame_filters");
  return PyRef::borrow(filter);
}

}  // namespace

bool frame_filter_enabled() {
  PyRef enabled = checked(PyObject_GetAttrString(our_filter().get(), "enabled"));
  return PyObject_IsTrue(enabled.get()) == 1;
}

void enable_frame_filter(bool enabled) {
  if (PyObject_SetAttrString(our_filter().get(), "enabled", enabled ? Py_True : Py_False) != 0)
    throw PythonErrorSet();
}

void install_frame_filter(PyObject* module) {
  PyObject* globals = PyModule_GetDict(module);  // borrowed
  for (PyMethodDef& helper : kHelpers) {
    PyRef function = checked(PyCFunction_NewEx(&helper, nullptr, nullptr));
    if (PyDict_SetItemString(globals, helper.ml_name, function.get()) != 0) throw PythonErrorSet();
  }
  // Before 3.10 Python runs code whose globals lack __builtins__ with no built-ins at all (the
  // frame filter's imports fail: "__import__ not found"), and an extension module's dict has none.
  if (!PyDict_GetItemString(globals, "__builtins__") &&
      PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) != 0) {
    throw PythonErrorSet();
  }
  PyRef code = checked(Py_CompileString(kFrameFilterSource, "hangpy/frame_filter.py",
                                        Py_file_input));
  checked(PyEval_EvalCode(code.get(), globals, globals));
  PyObject* register_function = PyDict_GetItemString(globals, "register_frame_filter");
  if (!register_function) throw UserError("hangpy: frame_filter.py has no register_frame_filter");
  checked(PyObject_CallObject(register_function, nullptr));
}

}  // namespace hangpy::gdbplugin
