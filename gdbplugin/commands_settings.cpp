// The `hangpy` prefix command: what hangpy knows about the selected process, its settings
// (`hangpy bt on|off`: Python frames in gdb's `bt`) and its version.
#include <fmt/format.h>

#include "cpython/layouts/all_layouts.h"
#include "gdbplugin/analysis_cache.h"
#include "gdbplugin/command_arguments.h"
#include "gdbplugin/commands.h"
#include "gdbplugin/frame_filter.h"
#include "gdbplugin/gdb_api.h"
#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

void hangpy_status(std::string_view argument) {
  if (!trim(argument).empty())
    throw UserError(fmt::format("hangpy: unknown subcommand '{}' (see `help hangpy`)",
                                trim(argument)));
  Session& session = Session::instance();
  std::string text = fmt::format("Python frames in bt: {}\n",
                                 frame_filter_enabled() ? "on" : "off");
  const Analysis& analysis = session.analysis();
  const cpython::ProcessStacks& stacks = *analysis.stacks;
  text += fmt::format("Python {} ({}), layout {}, _PyRuntime-style root at 0x{:x}\n",
                      stacks.version.text(), stacks.version_source, stacks.layout->name,
                      stacks.runtime_address);
  if (const auto& snapshot = analysis.target->snapshot_path())
    text += fmt::format("symbols from the snapshot note of {}\n", *snapshot);
  text += fmt::format("{} Python threads; {} analyses so far, {} reads from gdb for this one\n",
                      stacks.threads.size(), session.analyses_run(),
                      analysis.target->gdb_memory().gdb_reads());
  for (const std::string& warning : stacks.warnings) text += "warning: " + warning + "\n";
  gdb_write(text);
}

void hangpy_bt(std::string_view argument) {
  std::string_view value = trim(argument);
  if (value == "on" || value == "off") {
    enable_frame_filter(value == "on");
  } else if (!value.empty()) {
    throw UserError("usage: hangpy bt on|off");
  }
  gdb_write(fmt::format("Python frames in bt: {}\n", frame_filter_enabled() ? "on" : "off"));
}

void hangpy_version(std::string_view argument) {
  if (!trim(argument).empty()) throw UserError("usage: hangpy version");
  gdb_write(fmt::format("hangpy {}: reads CPython {}\n", HANGPY_VERSION,
                        cpython::supported_versions()));
}

const CommandList kCommands{
    {"hangpy", "COMMAND_STATUS",
     "Show what hangpy found in the selected process: Python version, threads, warnings.\n"
     "Usage: hangpy\n"
     "hangpy " HANGPY_VERSION " reads Python stacks without Python debug info. Commands: py-bt,\n"
     "py-bt-full, py-list, py-up, py-down, py-locals, py-print, py-threads, py-deadlock,\n"
     "py-tasks; `hangpy bt on|off` shows or hides Python frames in gdb's bt; `hangpy version`\n"
     "names the CPython versions.",
     hangpy_status, true},
    {"hangpy bt", "COMMAND_STATUS",
     "Show Python frames in gdb's bt in place of the eval loop's frames (on by default).\n"
     "Usage: hangpy bt on|off   (no argument: show the setting)",
     hangpy_bt},
    {"hangpy version", "COMMAND_STATUS",
     "Show hangpy's version and the CPython versions it reads.\n"
     "Usage: hangpy version",
     hangpy_version},
};

}  // namespace
}  // namespace hangpy::gdbplugin
