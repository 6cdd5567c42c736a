// py-threads: every Python thread of the process in one list, with the gdb thread it runs on.
#include <map>

#include <fmt/format.h>

#include "gdbplugin/command_arguments.h"
#include "gdbplugin/commands.h"
#include "gdbplugin/gdb_api.h"
#include "gdbplugin/python_error.h"
#include "gdbplugin/selected_frame.h"
#include "gdbplugin/thread_diagnosis.h"
#include "diagnosis/wait_ends.h"
#include "report/diagnosis_report.h"
#include "report/stack_report.h"

namespace hangpy::gdbplugin {
namespace {

// gdb's thread numbers by LWP, so that a line says what to type in `thread N`.
std::map<int64_t, int64_t> gdb_thread_numbers() {
  std::map<int64_t, int64_t> numbers;
  PyRef threads = checked(PyObject_CallMethod(selected_inferior().get(), "threads", nullptr));
  PyRef sequence = checked(PySequence_Tuple(threads.get()));
  for (Py_ssize_t i = 0; i < PyTuple_Size(sequence.get()); ++i) {
    PyObject* thread = PyTuple_GetItem(sequence.get(), i);
    PyRef ptid = checked(PyObject_GetAttrString(thread, "ptid"));
    PyRef number = checked(PyObject_GetAttrString(thread, "num"));
    if (!PyTuple_Check(ptid.get()) || PyTuple_Size(ptid.get()) < 2) continue;
    int64_t lwp = PyLong_AsLongLong(PyTuple_GetItem(ptid.get(), 1));
    int64_t num = PyLong_AsLongLong(number.get());
    if (PyErr_Occurred()) throw PythonErrorSet();
    numbers[lwp] = num;
  }
  return numbers;
}

// The report's two-space lines, under py-threads' own two-space thread lines.
std::string indented(const std::string& lines) {
  std::string text;
  size_t at = 0;
  while (at < lines.size()) {
    size_t end = lines.find('\n', at);
    if (end == std::string::npos) end = lines.size();
    text += "  " + lines.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return text;
}

void py_deadlock(std::string_view argument) {
  refuse_arguments("py-deadlock", argument);
  Session& session = Session::instance();
  const Analysis& analysis = session.analysis();
  const diagnosis::ProcessDiagnosis why = diagnose_process(analysis);
  if (why.cycles.empty()) {
    size_t owned = 0;
    for (const diagnosis::ThreadDiagnosis& thread : why.threads)
      if (thread.blocked_on.owner) ++owned;
    // Where the waits end instead: the same lines a core's report opens with.
    std::string text = fmt::format("No deadlock among {} Python threads ({} wait{} for another thread).\n",
                                   analysis.stacks->threads.size(), owned, owned == 1 ? "s" : "");
    for (size_t i = 0; i < why.chains.size() && i < diagnosis::kMaxWaitChainsNamed; ++i)
      text += why.chains[i].text + "\n";
    gdb_write(text);
    return;
  }
  std::string text;
  for (const diagnosis::WaitCycle& cycle : why.cycles) text += cycle.text + "\n";
  gdb_write(text);
}

void py_threads(std::string_view argument) {
  refuse_arguments("py-threads", argument);
  Session& session = Session::instance();
  ThreadContext context = session.current_thread();
  const cpython::ProcessStacks& stacks = *context.analysis->stacks;
  std::map<int64_t, int64_t> numbers = gdb_thread_numbers();
  const diagnosis::ProcessDiagnosis why = diagnose_process(*context.analysis);
  std::string text = fmt::format("Python {} ({}), {} Python threads\n", stacks.version.text(),
                                 stacks.version_source, stacks.threads.size());
  text += report::format_process_diagnosis(why);
  for (size_t index = 0; index < stacks.threads.size(); ++index) {
    const cpython::PythonThread& thread = stacks.threads[index];
    bool current = thread.native_thread_id &&
                   static_cast<int64_t>(*thread.native_thread_id) == context.lwp;
    std::string gdb_thread = "-";
    if (thread.native_thread_id) {
      auto found = numbers.find(static_cast<int64_t>(*thread.native_thread_id));
      if (found != numbers.end()) gdb_thread = std::to_string(found->second);
    }
    text += fmt::format("{} gdb thread {}: {}\n", current ? "*" : " ", gdb_thread,
                        report::format_thread_header(thread, report::TextStyle{}));
    if (index < why.threads.size()) text += indented(report::format_thread_diagnosis(why.threads[index], stacks));
    if (!thread.frames.empty()) {
      const cpython::PythonFrame& innermost = thread.frames.front();
      text += fmt::format("    File \"{}\", line {}, in {}\n", innermost.file,
                          innermost.line ? std::to_string(*innermost.line) : "?",
                          innermost.qualname);
    } else if (thread.error) {
      text += fmt::format("    <frames end here: {}>\n", thread.error->describe());
    } else {
      text += "    (no Python frames)\n";
    }
  }
  for (const std::string& warning : stacks.warnings) text += "warning: " + warning + "\n";
  gdb_write(text);
}

const CommandList kCommands{
    {"py-threads", "COMMAND_STACK",
     "List every Python thread with its innermost Python frame.\n"
     "Usage: py-threads\n"
     "Each thread: gdb's thread number, the Python thread id (threading.get_ident()), the\n"
     "LWP, the thread's name, whether it holds the GIL, its state (main thread, daemon, GIL,\n"
     "the system call it is in), what it is blocked on, and where it is. `*` marks the\n"
     "selected thread. Deadlocks (threads waiting for each other) are listed first.",
     py_threads},
    {"py-deadlock", "COMMAND_STACK",
     "List the cycles of Python threads that wait for each other.\n"
     "Usage: py-deadlock\n"
     "One line per cycle: each thread, the lock (Lock, RLock, pthread mutex) or thread it waits\n"
     "for, and the thread that holds it. Owners come from the locks themselves (RLock, pthread\n"
     "mutex) and from the `with` blocks of the frames that hold them; a Lock whose owner memory\n"
     "does not tell ends no cycle.",
     py_deadlock},
};

}  // namespace
}  // namespace hangpy::gdbplugin
