// py-locals and py-print: variables of the selected Python frame, read from memory (no code of
// the process runs), printed in libpython.py's shapes: "name = repr" and "local 'name' = repr".
#include <fmt/format.h>

#include "cpython/eval_groups.h"
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

// Like libpython.py: the selected frame, then the older frames its eval-loop call runs (from 3.11
// one call runs Python-to-Python calls inline, down to the frame marked is_entry).
void py_locals(std::string_view argument) {
  refuse_arguments("py-locals", argument);
  auto selected = selected_python_frame(AtCallLine::kCallingFrame);
  if (!selected) return;
  cpython::VariableReader variables = variable_reader(*selected->context.analysis);
  const auto& frames = selected->context.thread->frames;
  size_t end = selected->index + 1;
  for (const cpython::FrameRange& group : cpython::eval_loop_groups(*selected->context.thread))
    if (group.begin <= selected->index && selected->index < group.end) end = group.end;
  std::string text;
  for (size_t i = selected->index; i < end && i < frames.size(); ++i) {
    auto locals = variables.locals(frames[i]);
    if (!locals) {
      gdb_write(text);
      throw UserError(fmt::format("py-locals: cannot read the locals of {}: {}",
                                  frames[i].function, locals.error().describe()));
    }
    text += fmt::format("Locals for {}\n", frames[i].function);
    for (const cpython::Variable& variable : *locals)
      text += fmt::format("{} = {}\n", variable.name, variable.repr);
  }
  gdb_write(text);
}

void py_print(std::string_view argument) {
  std::string_view name = trim(argument);
  if (name.empty()) throw UserError("usage: py-print NAME");
  auto selected = selected_python_frame(AtCallLine::kCallingFrame);
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
     "`Locals for NAME`, then one `name = repr` line per bound local (arguments first), values\n"
     "read from memory; then the same for the older frames the same eval-loop call runs (on\n"
     "3.11 and later one call runs Python-to-Python calls inline), as libpython.py does.",
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
