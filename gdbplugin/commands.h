// gdb commands implemented in C++: each is a name, a gdb command class, a help text and a
// function. register_commands() makes one gdb.Command subclass per entry, whose invoke() calls
// the function through guarded() (python_error.h), so every failure is one gdb error line.
#pragma once

#include <string_view>
#include <vector>

#include "gdbplugin/python_ref.h"

namespace hangpy::gdbplugin {

struct CommandSpec {
  const char* name;
  const char* command_class;  // the gdb.COMMAND_* constant's name, e.g. "COMMAND_STACK"
  const char* help;           // first line: the summary `help` lists
  void (*run)(std::string_view argument);
  bool prefix = false;
};

// Each commands_*.cpp file lists its commands.
std::vector<CommandSpec> backtrace_commands();   // py-bt, py-bt-full
std::vector<CommandSpec> list_commands();        // py-list
std::vector<CommandSpec> navigation_commands();  // py-up, py-down
std::vector<CommandSpec> variable_commands();    // py-locals, py-print
std::vector<CommandSpec> thread_commands();      // py-threads
std::vector<CommandSpec> settings_commands();    // hangpy, hangpy bt

// Registers every command above with gdb; keeps the command objects in `module`.
void register_commands(PyObject* module);

}  // namespace hangpy::gdbplugin
