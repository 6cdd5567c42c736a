// py-locals and py-print: variables of the selected Python frame, read from memory (no code of
// the process runs), printed in libpython.py's shapes: "name = repr" and "local 'name' = repr".
#include <fmt/format.h>

#include "gdbplugin/command_arguments.h"
#include "gdbplugin/commands.h"
#include "gdbplugin/gdb_api.h"
#include "gdbplugin/python_error.h"
#include "gdbplugin/selected_frame.h"

namespace hangpy::gdbplugin {
namespace {

const char* scope_name(cpython::Scope scope) {
  switch (scope) {
    case cpython::Scope::kLocal: return "local";
    case cpython::Scope::kGlobal: return "global";
    case cpython::Scope::kBuiltin: return "builtin";
  }
  return "?";
}

void py_locals(std::string_view argument) {
  refuse_arguments("py-locals", argument);
  auto selected = selected_python_frame();
  if (!selected) return;
  cpython::VariableReader variables = variable_reader(*selected->context.analysis);
  auto locals = variables.locals(*selected->frame);
  if (!locals) {
    throw UserError(fmt::format("py-locals: cannot read the locals of {}: {}",
                                selected->frame->function, locals.error().describe()));
  }
  std::string text = fmt::format("Locals for {}\n", selected->frame->function);
  for (const cpython::Variable& variable : *locals)
    text += fmt::format("{} = {}\n", variable.name, variable.repr);
  gdb_write(text);
}

void py_print(std::string_view argument) {
  std::string_view name = trim(argument);
  if (name.empty()) throw UserError("usage: py-print NAME");
  auto selected = selected_python_frame();
  if (!selected) return;
  cpython::VariableReader variables = variable_reader(*selected->context.analysis);
  auto found = variables.lookup(*selected->frame, name);
  if (!found) {
    throw UserError(fmt::format("py-print: cannot look up {}: {}", name,
                                found.error().describe()));
  }
  if (!*found) {
    gdb_write(fmt::format("{} not found\n", python_repr(name)));
    return;
  }
  const cpython::FoundVariable& variable = **found;
  gdb_write(fmt::format("{} {} = {}\n", scope_name(variable.scope), python_repr(name),
                        variable.variable.repr));
}

const CommandList kCommands{
    {"py-locals", "COMMAND_DATA",
     "Print the local variables of the selected Python frame.\n"
     "Usage: py-locals\n"
     "One `name = repr` line per bound local (arguments first), values read from memory.",
     py_locals},
    {"py-print", "COMMAND_DATA",
     "Print a Python variable of the selected Python frame.\n"
     "Usage: py-print NAME\n"
     "Looks NAME up like Python does: locals, then the frame's globals, then builtins, and\n"
     "prints `local|global|builtin 'NAME' = repr`, or `'NAME' not found`.",
     py_print},
};

}  // namespace
}  // namespace hangpy::gdbplugin
