// py-tasks: asyncio's tasks of the process or core (issue 12), as coreanalyze prints them after
// the threads: the table, the awaited-by forest with each task's coroutine stack, the deadlocks.
#include <fmt/format.h>

#include "gdbplugin/analysis_cache.h"
#include "gdbplugin/command_arguments.h"
#include "gdbplugin/commands.h"
#include "gdbplugin/gdb_api.h"
#include "report/asyncio_report.h"

namespace hangpy::gdbplugin {
namespace {

void py_tasks(std::string_view argument) {
  refuse_arguments("py-tasks", argument);
  Session& session = Session::instance();
  const cpython::ProcessStacks& stacks = *session.analysis().stacks;
  if (stacks.layout && stacks.layout->asyncio.task_coro == cpython::kAbsent) {
    // The layout table has no asyncio fields for this version: the engine cannot tell whether
    // asyncio was imported, so do not say it was not.
    gdb_write(fmt::format("no asyncio tasks: hangpy does not read asyncio's tasks of Python {}\n",
                          stacks.version.text()));
    return;
  }
  const diagnosis::TaskForest& tasks = session.asyncio_tasks();
  if (!tasks.tasks.imported) {
    gdb_write("no asyncio tasks: the process has not imported asyncio\n");
    return;
  }
  std::string text = report::format_asyncio_tasks(tasks, stacks);
  // The report starts with a blank line that separates it from coreanalyze's threads.
  if (text.starts_with('\n')) text.erase(0, 1);
  if (!text.empty() && !text.ends_with('\n')) text += '\n';
  gdb_write(text);
}

const CommandList kCommands{
    {"py-tasks", "COMMAND_STACK",
     "List asyncio's tasks: what each awaits, its coroutine stack, who awaits it.\n"
     "Usage: py-tasks\n"
     "Every task of every event loop (as `python -m asyncio ps` and `pstree` show a live 3.14\n"
     "process, here from any process or core of 3.7 on): a table of the tasks with their state,\n"
     "what each awaits (a task, a Future, gather, TaskGroup, asyncio.sleep, a Lock and its\n"
     "holder, Event, Queue, run_in_executor and its thread...) and its innermost coroutine, then\n"
     "the tree of tasks under the tasks that await them, each with its coroutine stack\n"
     "(innermost first). Tasks that await each other in a ring are listed first as deadlocks.\n"
     "Past 200 tasks, tasks with the same coroutine stack are shown as one line with a count.",
     py_tasks},
};

}  // namespace
}  // namespace hangpy::gdbplugin
