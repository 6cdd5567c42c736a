// gdb commands implemented in C++: each is a name, a gdb command class, a help text and a
// function. register_commands() makes one gdb.Command subclass per entry, whose invoke() calls
// the function through guarded() (python_error.h), so every failure is one gdb error line.
#pragma once

#include <initializer_list>
#include <string_view>

#include "gdbplugin/python_ref.h"

namespace hangpy::gdbplugin {

struct CommandSpec {
  const char* name;
  const char* command_class;  // the gdb.COMMAND_* constant's name, e.g. "COMMAND_STACK"
  const char* help;           // first line: the summary `help` lists
  void (*run)(std::string_view argument);
  bool prefix = false;
};

// Each commands_*.cpp file lists its commands in one static CommandList, which adds them to the
// module's table while the module loads (before gdb imports it, so before register_commands).
struct CommandList {
  explicit CommandList(std::initializer_list<CommandSpec> specs);
};

// Registers every listed command with gdb, a prefix command before its subcommands; keeps the
// command objects in `module`.
void register_commands(PyObject* module);

}  // namespace hangpy::gdbplugin
