// The `hangpy` Python module gdb loads (`load hangpy` or `python import hangpy`): registers the
// commands, the frame filter and the event handlers that keep the per-stop analysis fresh.
#include "gdbplugin/analysis_cache.h"
#include "gdbplugin/commands.h"
#include "gdbplugin/frame_filter.h"
#include "gdbplugin/gdb_api.h"
#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

// Anything that can change what the process's memory says ends the cached analysis: the
// process ran (cont, stop), files appeared or went (new_objfile, clear_objfiles: also a new
// core), the user wrote memory or registers, an inferior came or went.
constexpr const char* kInvalidatingEvents[] = {
    "stop", "cont", "exited", "new_objfile", "clear_objfiles", "new_inferior",
    "inferior_deleted", "new_thread", "memory_changed", "register_changed", "inferior_call",
};

PyObject* invalidate(PyObject*, PyObject*) {
  Session::instance().invalidate();
  Py_RETURN_NONE;
}

PyMethodDef kInvalidateDef = {"_invalidate", invalidate, METH_VARARGS, nullptr};

// libpython.py (python3.X-dbg) defines py-bt and friends too, and gdb auto-loads it whenever
// the interpreter's file is loaded, after hangpy was: the last definition wins in gdb. So
// hangpy defines its commands again once new files have loaded and before each prompt.
PyObject* register_again(PyObject* module, PyObject*) {
  return guarded([module]() -> PyObject* {
    register_commands(module);
    Py_RETURN_NONE;
  });
}

PyMethodDef kRegisterAgainDef = {"_register_again", register_again, METH_VARARGS, nullptr};

void keep_commands_on_top(PyObject* module) {
  PyRef events = checked(PyObject_GetAttrString(gdb_module(), "events"));
  PyRef handler = checked(PyCFunction_NewEx(&kRegisterAgainDef, module, nullptr));
  for (const char* name : {"new_objfile", "before_prompt"}) {
    PyObject* registry = PyObject_GetAttrString(events.get(), name);
    if (!registry) {
      PyErr_Clear();
      continue;
    }
    PyRef registry_ref = PyRef::steal(registry);
    checked(PyObject_CallMethod(registry, "connect", "O", handler.get()));
  }
  if (PyModule_AddObject(module, "_register_again", handler.get()) != 0) throw PythonErrorSet();
  handler.release();
}

void connect_events(PyObject* module) {
  PyRef events = checked(PyObject_GetAttrString(gdb_module(), "events"));
  PyRef handler = checked(PyCFunction_NewEx(&kInvalidateDef, nullptr, nullptr));
  for (const char* name : kInvalidatingEvents) {
    PyObject* registry = PyObject_GetAttrString(events.get(), name);
    if (!registry) {  // an older gdb without this event: nothing to listen to
      PyErr_Clear();
      continue;
    }
    PyRef registry_ref = PyRef::steal(registry);
    checked(PyObject_CallMethod(registry, "connect", "O", handler.get()));
  }
  if (PyModule_AddObject(module, "_invalidate", handler.get()) != 0) throw PythonErrorSet();
  handler.release();
}

PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT,
    "hangpy",
    "hangpy: Python stacks in gdb without Python debug info (py-bt, py-list, py-locals, ...).",
    -1,       // no per-interpreter state: gdb has one interpreter
    nullptr,  // methods: the commands are gdb.Command objects, not module functions
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace
}  // namespace hangpy::gdbplugin

PyMODINIT_FUNC PyInit_hangpy() {
  using namespace hangpy::gdbplugin;
  return guarded([]() -> PyObject* {
    remember_gdb_error_type(gdb_module());
    PyRef module = checked(PyModule_Create(&kModule));
    // The one version (CMake's project()), as coreanalyze --version prints it.
    if (PyModule_AddStringConstant(module.get(), "__version__", HANGPY_VERSION) != 0)
      throw PythonErrorSet();
    register_commands(module.get());
    install_frame_filter(module.get());
    connect_events(module.get());
    keep_commands_on_top(module.get());
    return module.release();
  });
}
