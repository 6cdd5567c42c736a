#include "gdbplugin/commands.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "gdbplugin/gdb_api.h"
#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

constexpr const char* kCapsuleName = "hangpy.CommandSpec";

// invoke(argument, from_tty), bound to one CommandSpec through the capsule.
PyObject* invoke(PyObject* capsule, PyObject* args) {
  return guarded([&]() -> PyObject* {
    auto* spec = static_cast<const CommandSpec*>(PyCapsule_GetPointer(capsule, kCapsuleName));
    if (!spec) throw PythonErrorSet();
    const char* argument;
    PyObject* from_tty;
    if (!PyArg_ParseTuple(args, "sO", &argument, &from_tty)) throw PythonErrorSet();
    spec->run(argument);
    Py_RETURN_NONE;
  });
}

PyMethodDef kInvokeDef = {"invoke", invoke, METH_VARARGS, nullptr};

// Filled by the CommandLists while the module loads, never changed afterwards: the capsules
// point into it.
std::vector<CommandSpec>& all_specs() {
  static std::vector<CommandSpec> specs;
  return specs;
}

PyRef make_command(const CommandSpec& spec, PyObject* command_base) {
  PyRef capsule = checked(PyCapsule_New(const_cast<CommandSpec*>(&spec), kCapsuleName, nullptr));
  PyRef function = checked(PyCFunction_New(&kInvokeDef, capsule.get()));
  // A built-in function in a class dict is no descriptor: gdb's self.invoke(argument, from_tty)
  // calls it without self (PyInstanceMethod_New, which would bind it, is outside the Stable ABI).
  PyRef doc = checked(PyUnicode_FromString(spec.help));
  PyRef namespace_dict = checked(Py_BuildValue("{s:O,s:O}", "invoke", function.get(), "__doc__",
                                               doc.get()));
  std::string class_name = std::string("HangpyCommand_") + spec.name;
  PyRef type_args = checked(Py_BuildValue("(s(O)O)", class_name.c_str(), command_base,
                                          namespace_dict.get()));
  PyRef command_class = checked(PyObject_Call(reinterpret_cast<PyObject*>(&PyType_Type),
                                              type_args.get(), nullptr));
  PyRef klass = checked(PyObject_GetAttrString(gdb_module(), spec.command_class));
  PyRef complete_none = checked(PyObject_GetAttrString(gdb_module(), "COMPLETE_NONE"));
  PyRef init_args = checked(Py_BuildValue("(sOOO)", spec.name, klass.get(), complete_none.get(),
                                          spec.prefix ? Py_True : Py_False));
  return checked(PyObject_Call(command_class.get(), init_args.get(), nullptr));
}

}  // namespace

CommandList::CommandList(std::initializer_list<CommandSpec> specs) {
  std::vector<CommandSpec>& all = all_specs();
  all.insert(all.end(), specs.begin(), specs.end());
  // By name: "hangpy" before "hangpy bt", as gdb needs a prefix command first.
  std::stable_sort(all.begin(), all.end(), [](const CommandSpec& a, const CommandSpec& b) {
    return std::string_view(a.name) < std::string_view(b.name);
  });
}

void register_commands(PyObject* module) {
  PyRef command_base = checked(PyObject_GetAttrString(gdb_module(), "Command"));
  PyRef commands = checked(PyList_New(0));
  // The names, for whoever lists the commands with their `help` (the man page: packaging/).
  PyRef names = checked(PyList_New(0));
  for (const CommandSpec& spec : all_specs()) {
    PyRef command = make_command(spec, command_base.get());
    if (PyList_Append(commands.get(), command.get()) != 0) throw PythonErrorSet();
    PyRef name = checked(PyUnicode_FromString(spec.name));
    if (PyList_Append(names.get(), name.get()) != 0) throw PythonErrorSet();
  }
  if (PyObject_SetAttrString(module, "command_names", names.get()) != 0) throw PythonErrorSet();
  // gdb holds the commands too; the module's list makes that independent of gdb's internals.
  // Registering again replaces the list (and gdb replaces the commands).
  if (PyObject_SetAttrString(module, "_commands", commands.get()) != 0) throw PythonErrorSet();
}

}  // namespace hangpy::gdbplugin
