#!/usr/bin/python3
"""gdb test: hangpy's frame-level commands and its failure paths, against ground truth.

  py-up / py-down walked past both ends, py-list and py-locals on each selected frame,
  py-print of locals, a global, a builtin and an unknown name; a thread without Python; a
  process without Python; a corrupted frame pointer in a throwaway process (gdb must answer
  the next command); py-tasks on asyncio tasks (live, on a gcore, and with a task's memory
  overwritten) against the program's own view of them, and on a process without asyncio;
  `load` with another argument; help text of every command; two of CPython's own test_gdb
  cases (cpython_gdb_cases.py: py-print after py-up stopped at a C call's line, and py-bt at a
  breakpoint on wrapper_call).

  test_gdb_commands.py --interpreter debian-3.11 --hangpy-init build/gdbplugin/hangpy.gdb

Exit status: 0 passed, 1 failed, 77 gdb, the interpreter or the module is missing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)
import cores  # noqa: E402
import cpython_gdb_cases  # noqa: E402
import gdb_compare  # noqa: E402
import gdb_session  # noqa: E402
import interpreters  # noqa: E402
from results import SKIP, Results  # noqa: E402

COMMANDS_WITH_HELP = ["py-bt", "py-bt-full", "py-list", "py-up", "py-down", "py-locals",
                      "py-print", "py-threads", "py-tasks", "hangpy", "hangpy bt",
                      "hangpy version"]
# A C expression (needs the interpreter's debug info) for a thread state's innermost-frame
# pointer, per version; the corruption case runs where the version is listed.
# version -> (C expression of the first thread's innermost frame pointer, an address that is
# no frame); both need the interpreter's debug info (pyenv's builds carry it).
FRAME_POINTER_EXPRESSION = {
    "2.7": ("interp_head->tstate_head->frame", "&interp_head"),
    "3.6": ("interp_head->tstate_head->frame", "&interp_head"),
    "3.7": ("_PyRuntime.interpreters.head->tstate_head->frame", "&_PyRuntime"),
    "3.8": ("_PyRuntime.interpreters.head->tstate_head->frame", "&_PyRuntime"),
    "3.9": ("_PyRuntime.interpreters.head->tstate_head->frame", "&_PyRuntime"),
    "3.10": ("_PyRuntime.interpreters.head->tstate_head->frame", "&_PyRuntime"),
    "3.11": ("_PyRuntime.interpreters.head->threads.head->cframe->current_frame", "&_PyRuntime"),
    "3.12": ("_PyRuntime.interpreters.head->threads.head->cframe->current_frame", "&_PyRuntime"),
    "3.13": ("_PyRuntime.interpreters.head->threads.head->current_frame", "&_PyRuntime"),
}
SUMMARY = re.compile(r"^#(\d+) Frame 0x[0-9a-f]+, for file (.*), line (\d+), in (\S+) \(")
NATIVE_THREAD_PROGRAM = os.path.join(HERE, "programs", "native_thread.py")
ASYNCIO_PROGRAM = os.path.join(HERE, "programs", "asyncio_tasks.py")
NOT_IMPORTED = "no asyncio tasks: the process has not imported asyncio"
# py-tasks' forest: "<tree prefix><name> (<state>[ on thread ...][, awaiting ...])", or
# "<prefix><name> (shown above)" for a task already printed under another parent, and each
# task's coroutines, innermost first, one "coroutine <qualname> at <file>:<line>" line each.
TASK_LINE = re.compile(r"^(?P<prefix>(?:[│ ]   |[├└]── )*)(?P<name>\S.*?) "
                       r"\((?P<status>(?:pending|running|done|cancelled)\b.*|shown above)\)$")
COROUTINE_LINE = re.compile(r"^[│ ]*coroutine (?P<name>\S+) at (?P<file>.+):(?P<line>\d+)$")


class Checks(object):
    def __init__(self):
        self.problems = []

    def expect(self, condition, message):
        if not condition:
            self.problems.append(message)


def truth_function_names(thread):
    """co_name of each frame, innermost first (what libpython-shaped summaries print)."""
    return [frame[2] for frame in reversed(thread["frames"])]


CALL_STOP = re.compile(r"^#(\d+) (<built-in (method|function) |<method-wrapper |Waiting for the GIL$"
                       r"|Garbage-collecting$)")
NATIVE_FRAME_NAME = re.compile(r"^#(\d+) +(?:0x[0-9a-f]+ in )?(\S+) \(")
EXTRA_UPS = 3  # room for the C calls py-up also stops at (libpython's "#N <built-in method ...>")


def check_navigation(checks, result, thread):
    """py-down below every Python frame (gdb stopped in C), the first py-up selecting the
    innermost Python frame (as libpython's does), py-up to the outermost and past it, py-down
    back. Each "#N" is the number of a gdb frame of the eval loop (libpython's numbering); the
    C calls py-up also stops at print libpython's call line and have no Python frame to list."""
    frames = list(reversed(thread["frames"]))
    native_names = {}
    for line in result.output("bt"):
        match = NATIVE_FRAME_NAME.match(line)
        if match:
            native_names[int(match.group(1))] = match.group(2)
    checks.expect(result.output("down-at-start") == ["Unable to find a newer python frame"],
                  "py-down at the innermost frame: %s" % result.output("down-at-start"))
    python_stops = []  # (up index, number, file, line, name)
    stops = 0
    for index in range(len(frames) + EXTRA_UPS):
        lines = result.output("up-%d" % index)
        if lines == ["Unable to find an older python frame"]:
            break
        stops += 1
        call = CALL_STOP.match(lines[0]) if lines else None
        if call:
            checks.expect(result.output("list-%d" % index) ==
                          ["Unable to read information on python frame"],
                          "py-list at the C call %s: %s" % (lines[0], result.output("list-%d" % index)))
            continue
        match = SUMMARY.match(lines[0]) if lines else None
        if not match:
            checks.expect(False, "py-up #%d printed %s" % (index, lines))
            continue
        position = len(python_stops)
        python_stops.append((index, int(match.group(1)), match.group(2), int(match.group(3)),
                             match.group(4)))
        if position >= len(frames):
            continue
        marked = [line.split()[0] for line in result.output("list-%d" % index)
                  if line.lstrip().startswith(">")]
        checks.expect(marked == [">%d" % frames[position][1]],
                      "py-list after py-up #%d marks %s, want line %d"
                      % (index, marked, frames[position][1]))
        header = result.output("locals-%d" % index)[:1]
        checks.expect(header == ["Locals for %s" % frames[position][2]],
                      "py-locals after py-up #%d: %s" % (index, header))
    got = [stop[2:] for stop in python_stops]
    want = [tuple(frame[:3]) for frame in frames]
    checks.expect(got == want, "py-up's Python frames: got %s, want %s" % (got, want))
    numbers = [stop[1] for stop in python_stops]
    checks.expect(numbers == sorted(numbers) and
                  all("EvalFrame" in native_names.get(number, "") for number in numbers),
                  "py-up's numbers %s are not gdb's eval-loop frames (%s)"
                  % (numbers, {n: native_names.get(n) for n in numbers}))
    checks.expect(stops < len(frames) + EXTRA_UPS,
                  "py-up did not reach the outermost frame in %d steps" % stops)
    back = result.output("down-from-end")
    if stops >= 2:
        previous = result.output("up-%d" % (stops - 2))
        checks.expect(back == previous, "py-down from the outermost frame: %s, want %s"
                      % (back, previous))


def navigation_commands(thread):
    commands = [("bt-off", "hangpy bt off"), ("bt", "bt"), ("down-at-start", "py-down")]
    for index in range(0, len(thread["frames"]) + EXTRA_UPS):
        commands += [("up-%d" % index, "py-up"), ("list-%d" % index, "py-list"),
                     ("locals-%d" % index, "py-locals")]
    return commands + [("down-from-end", "py-down")]


def innermost_section(lines):
    """py-locals' first "Locals for NAME" section: the selected frame's."""
    section = []
    for line in lines:
        if line.startswith("Locals for ") and section:
            break
        section.append(line)
    return section


def check_variables(checks, result, program_file, thread, version):
    """py-print agrees with py-locals; finds a global and a builtin; says when a name is none.
    py-locals goes on with the older frames of the same eval-loop call, as libpython's does:
    from 3.11 one call runs all of this program's frames, before it each frame is a call."""
    all_lines = result.output("locals-0")
    locals_lines = innermost_section(all_lines)
    checks.expect(locals_lines[:1] and locals_lines[0].startswith("Locals for "),
                  "py-locals: %s" % locals_lines)
    headers = [line for line in all_lines if line.startswith("Locals for ")]
    names = truth_function_names(thread)
    want = ["Locals for %s" % name for name in (names if version >= (3, 11) else names[:1])]
    checks.expect(headers == want, "py-locals sections %s, want %s" % (headers, want))
    for line in locals_lines[1:]:
        name, _, value = line.partition(" = ")
        printed = result.output("print-local-%s" % name)
        checks.expect(printed == ["local '%s' = %s" % (name, value)],
                      "py-print %s: %s, py-locals says %s" % (name, printed, value))
    checks.expect(result.output("print-global") == ["global '__name__' = '__main__'"],
                  "py-print __name__ in %s: %s" % (program_file, result.output("print-global")))
    builtin = result.output("print-builtin")
    # libpython's shape; Python 2's builtins have no module as their self.
    want = ("builtin 'len' = <built-in function len>" if version < (3,) else
            "builtin 'len' = <built-in method len of module object at remote 0x")
    checks.expect(len(builtin) == 1 and builtin[0].startswith(want),
                  "py-print len: %s, want %s..." % (builtin, want))
    checks.expect(result.output("print-unknown") == ["'no_such_name_in_any_scope' not found"],
                  "py-print of an unknown name: %s" % result.output("print-unknown"))


def run_navigation_and_variables(options, interpreter, checks):
    """On the method scenario: its innermost frame is in the program file (so `__name__` is
    '__main__') and has a local (`self`)."""
    workdir = tempfile.mkdtemp(prefix="hangpy-gdb-")
    try:
        with cores.ScenarioProcess(interpreter, "blocking_method.py", workdir) as process:
            truth = process.wait_for_ground_truth()
            thread = list(truth["threads"].values())[0]
            first = [("locals-0", "py-locals")]
            probe = gdb_session.run_gdb(options, gdb_session.target_args_live(process.pid), first)
            names = [line.partition(" = ")[0]
                     for line in innermost_section(probe.output("locals-0"))[1:]]
            checks.expect(names, "py-locals found no locals in %s" % thread["frames"][-1])
            commands = first + [("print-local-%s" % name, "py-print %s" % name) for name in names]
            commands += [("print-global", "py-print __name__"), ("print-builtin", "py-print len"),
                         ("print-unknown", "py-print no_such_name_in_any_scope")]
            commands += navigation_commands(thread)
            result = gdb_session.run_gdb(options, gdb_session.target_args_live(process.pid),
                                         commands)
            tasks = gdb_session.run_gdb(options, gdb_session.target_args_live(process.pid),
                                        [("py-tasks", "py-tasks")]).output("py-tasks")
        version = tuple(int(part) for part in truth["version"].split(".")[:2])
        # The layout tables have asyncio's fields from 3.7 on; before, py-tasks must not claim
        # that asyncio was not imported.
        want = [NOT_IMPORTED] if version >= (3, 7) else [
            "no asyncio tasks: hangpy does not read asyncio's tasks of Python %s" % truth["version"]]
        checks.expect(tasks == want, "py-tasks without asyncio: %s, want %s" % (tasks, want))
        check_variables(checks, result, thread["frames"][-1][0], thread, version)
        check_navigation(checks, result, thread)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def wait_for_file(process, path):
    deadline = time.time() + cores.GROUND_TRUTH_TIMEOUT
    while not os.path.exists(path):
        if process.process.poll() is not None or time.time() > deadline:
            raise cores.CoreError("no ground truth from %s" % NATIVE_THREAD_PROGRAM)
        time.sleep(0.05)
    time.sleep(0.2)  # written atomically; the reporter thread then exits
    import json
    with open(path) as truth_file:
        return json.load(truth_file)


def run_thread_without_python(options, interpreter, checks):
    workdir = tempfile.mkdtemp(prefix="hangpy-gdb-")
    try:
        with cores.ScenarioProcess(interpreter, NATIVE_THREAD_PROGRAM, workdir) as process:
            truth = wait_for_file(process, process.truth_path)
            if "skip" in truth:
                return truth["skip"]
            python_lwps = set(gdb_compare.truth_by_lwp(truth))
            # The reporter thread exits after writing: wait for Python threads + the watchdog.
            deadline = time.time() + cores.THREAD_EXIT_TIMEOUT
            while len(os.listdir("/proc/%d/task" % process.pid)) != len(python_lwps) + 1:
                if time.time() > deadline:
                    raise cores.CoreError("the watchdog thread did not show up")
                time.sleep(0.02)
            native = [int(task) for task in os.listdir("/proc/%d/task" % process.pid)
                      if int(task) not in python_lwps]
            commands = [("py-bt-all", "thread apply all py-bt")]
            for command in ("py-bt", "py-bt-full", "py-list", "py-locals", "py-print x", "py-up",
                            "py-down"):
                commands.append((command, "thread apply all -q %s" % command))
            commands.append(("bt-all", "thread apply all bt"))
            result = gdb_session.run_gdb(options, gdb_session.target_args_live(process.pid),
                                         commands)
        sections = gdb_session.split_threads(result.output("py-bt-all"))
        for lwp in native:
            checks.expect(sections.get(lwp) == [
                "No Python frames in this thread (LWP %d runs no Python thread state)" % lwp],
                "py-bt in the native thread %d: %s" % (lwp, sections.get(lwp)))
        checks.problems += gdb_compare.compare_thread_sections(
            "py-bt next to a native thread", truth, sections, gdb_compare.traceback_frames)
        for command in ("py-bt", "py-bt-full", "py-list", "py-locals", "py-print x", "py-up",
                        "py-down"):
            lines = result.output(command)
            wanted = ["No Python frames in this thread (LWP %d runs no Python thread state)" % lwp
                      for lwp in native]
            checks.expect(all(line in lines for line in wanted),
                          "%s in the native thread: %s" % (command, lines))
        bt = gdb_session.split_threads(result.output("bt-all"))
        for lwp in native:
            checks.expect(bt.get(lwp) and not gdb_compare.bt_python_frames(bt[lwp]),
                          "bt of the native thread: %s" % bt.get(lwp))
        checks.problems += gdb_compare.compare_thread_sections(
            "bt next to a native thread", truth, bt, gdb_compare.bt_python_frames, qualified=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run_without_python(options, checks):
    """gdb attached to a process with no Python at all: one error line, and bt still works."""
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        time.sleep(0.1)
        result = gdb_session.run_gdb(options, gdb_session.target_args_live(sleeper.pid), [
            ("py-bt", "py-bt"), ("bt", "bt"), ("py-threads", "py-threads"),
            ("py-tasks", "py-tasks")])
    finally:
        sleeper.kill()
        sleeper.wait()
    for command in ("py-bt", "py-threads", "py-tasks"):
        lines = result.output(command)
        checks.expect(len(lines) == 1 and lines[0].startswith("hangpy: no Python interpreter"),
                      "%s without Python: %s" % (command, lines))
    checks.expect(any(line.startswith("#0 ") for line in result.output("bt")),
                  "bt without Python: %s" % result.output("bt"))


def run_corrupted_frame_pointer(interpreter, init, checks):
    """Garbage in a thread state's frame pointer of a throwaway process: py-bt says where the
    frames end, the other threads still read right, and gdb answers the next command."""
    version = None
    workdir = tempfile.mkdtemp(prefix="hangpy-gdb-")
    try:
        with cores.ScenarioProcess(interpreter, "deadlock.py", workdir) as process:
            truth = process.wait_for_ground_truth()
            version = ".".join(truth["version"].split(".")[:2])
            expression, garbage = FRAME_POINTER_EXPRESSION.get(version, (None, None))
            if expression is None:
                return "no frame pointer expression for %s" % version
            # The C expression needs the interpreter's debug info: do not hide it here.
            options = gdb_session.GdbOptions(hangpy_init=init)
            result = gdb_session.run_gdb(options, gdb_session.target_args_live(process.pid), [
                ("before", "thread apply all py-bt"),
                ("unreadable", "set var %s = (void *)0xdeadbeef" % expression),
                ("py-bt-unreadable", "thread apply all py-bt"),
                ("garbage", "set var %s = (void *)%s" % (expression, garbage)),
                ("py-bt-garbage", "thread apply all py-bt"),
                ("bt-garbage", "thread apply all bt"),
                ("py-threads", "py-threads"),
                ("alive", "echo still answering\\n"),
            ])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    checks.expect(result.returncode == 0, "gdb exited %d" % result.returncode)
    before = gdb_session.split_threads(result.output("before"))
    checks.problems += gdb_compare.compare_thread_sections("py-bt before corruption", truth,
                                                           before, gdb_compare.traceback_frames)
    for label, marker in (("py-bt-unreadable", "0xdeadb"), ("py-bt-garbage", "")):
        lines = result.output(label)
        sections = gdb_session.split_threads(lines)
        broken = [lwp for lwp, thread_lines in sections.items()
                  if any("<frames end here:" in line and marker in line for line in thread_lines)]
        if not broken:
            # The engine may refuse the whole process instead (it checks its layout on the first
            # threads): then `thread apply all` stops at one error line, which must say why.
            errors = [line for line in lines if line.startswith("hangpy: ") and marker in line]
            checks.expect(len(errors) == 1, "%s: no thread says where its frames end and no "
                          "error line names %r: %s" % (label, marker, lines))
            continue
        checks.expect(len(broken) == 1, "%s: %d threads say where their frames end, want 1: %s"
                      % (label, len(broken), sections))
        healthy = dict((lwp, thread) for lwp, thread in gdb_compare.truth_by_lwp(truth).items()
                       if lwp not in broken)
        sub_truth = {"threads": dict((str(lwp), thread) for lwp, thread in healthy.items())}
        checks.problems += gdb_compare.compare_thread_sections(
            label + " (the other threads)", sub_truth, sections, gdb_compare.traceback_frames)
    checks.expect(result.output("alive") == ["still answering"],
                  "gdb after the corruption: %s" % result.output("alive"))
    for line in result.text.splitlines():
        checks.expect("Python Exception" not in line and "internal error" not in line,
                      "gdb printed: %s" % line)
    return None


def parse_task_forest(lines):
    """py-tasks' lines -> (header line, deadlock lines, [{"name", "status", "parent",
    "coroutines": [(name, file, line)]}] for each task line of the forest, in order)."""
    header = lines[0] if lines else ""
    deadlocks = [line for line in lines if line.startswith("deadlock: ")]
    forest_at = lines.index("") + 1 if "" in lines else len(lines)  # after the table
    nodes = []
    parents = []  # the task line of each depth above the current line
    for line in lines[forest_at:]:
        task = TASK_LINE.match(line)
        if task:
            depth = len(task.group("prefix")) // 4
            del parents[depth:]
            nodes.append({"name": task.group("name"), "status": task.group("status"),
                          "parent": parents[-1]["name"] if parents else None,
                          "coroutines": []})
            parents.append(nodes[-1])
            continue
        coroutine = COROUTINE_LINE.match(line)
        if coroutine and nodes:
            nodes[-1]["coroutines"].append((coroutine.group("name"), coroutine.group("file"),
                                            int(coroutine.group("line"))))
    return header, deadlocks, nodes


def check_tasks(checks, label, lines, truth):
    """py-tasks' output against the program's ground truth: every task with its coroutine stack,
    state and place in the awaited-by forest; the deadlock; what the tasks of each role await."""
    version = tuple(int(part) for part in truth["version"].split(".")[:2])
    header, deadlocks, nodes = parse_task_forest(lines)
    tasks = [task for task in truth["tasks"] if not task["done"]]
    checks.expect(header.startswith("asyncio: %d tasks (%d pending)" % (len(tasks), len(tasks))),
                  "%s: header %r, want %d pending tasks" % (label, header, len(tasks)))
    shown = [node for node in nodes if node["status"] != "shown above"]
    printed = dict((node["name"], node) for node in shown)
    checks.expect(len(printed) == len(shown) == len(tasks),
                  "%s: %d tasks in the forest (%d names), want %d: %s"
                  % (label, len(shown), len(printed), len(tasks), [n["name"] for n in shown]))

    def printed_name(task):
        if task["name"] is not None:
            return task["name"]
        # 3.7's tasks have no name: hangpy names them by coroutine and address.
        suffix = " at 0x%x" % task["address"]
        found = [name for name in printed if name.endswith(suffix)]
        return found[0] if len(found) == 1 else "<task at 0x%x>" % task["address"]

    names = dict((task["address"], printed_name(task)) for task in tasks)
    for task in tasks:
        node = printed.get(names[task["address"]])
        if node is None:
            checks.expect(False, "%s: task %s not in the forest" % (label, names[task["address"]]))
            continue
        checks.expect(node["status"].startswith("pending"),
                      "%s: %s is %r, want pending" % (label, node["name"], node["status"]))
        want = [(qualname if version >= (3, 11) else function, path, line)
                for path, line, function, qualname in task["coroutines"]]
        # Before 3.11 code objects have no qualname: hangpy may name a coroutine either way.
        got = [(want[i][0] if i < len(want) and name in (want[i][0], task["coroutines"][i][3])
                else name, path, line) for i, (name, path, line) in enumerate(node["coroutines"])]
        checks.expect(got == want, "%s: coroutines of %s: %s, want %s"
                      % (label, node["name"], node["coroutines"], want))
    edges = set((node["parent"], node["name"]) for node in nodes if node["parent"] is not None)
    def name_of(address):  # a task the edges name but all_tasks() did not list
        return names.get(address, "<unlisted task at 0x%x>" % address)

    want_edges = set((name_of(parent), name_of(child)) for parent, child in truth["edges"])
    checks.expect(edges == want_edges, "%s: awaited-by edges %s, want %s"
                  % (label, sorted(edges), sorted(want_edges)))
    roles = dict((role, printed.get(names.get(address), {"status": "(absent)"})["status"])
                 for role, address in truth["roles"].items())
    holder, waiter = names.get(truth["roles"]["holder"]), names.get(truth["roles"]["waiter"])
    checks.expect(len(deadlocks) == 1 and holder in deadlocks[0] and waiter in deadlocks[0],
                  "%s: deadlock lines %s, want one naming %s and %s"
                  % (label, deadlocks, holder, waiter))
    # The awaited task is named as the forest lists it (3.7's by coroutine and address).
    awaited_waiter = waiter
    for role, want in (("request-handler", "awaiting Future pending"),
                       ("waiter", "awaiting asyncio.Lock held by %s" % holder),
                       ("holder", "awaiting %s" % awaited_waiter),
                       ("sleeper", "awaiting asyncio.sleep(3600)"),
                       ("executor-user", "awaiting run_in_executor, in thread "),
                       ("gatherer", "awaiting gather of 2 tasks"),
                       ("tg-root", "awaiting TaskGroup of 1 ")):
        if role in roles:
            checks.expect(want in roles[role], "%s: %s is %r, want %r..."
                          % (label, role, roles[role], want))


def args_free_threaded(interpreter):
    """Whether the interpreter is a free-threaded build (its objects have a 32-byte header)."""
    result = subprocess.run(interpreter.command("/", ["-c", "import sysconfig; print("
                                                  "sysconfig.get_config_var('Py_GIL_DISABLED'))"]),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    return result.stdout.decode("utf-8", "replace").strip() == "1"


def run_asyncio_tasks(options, interpreter, checks):
    """py-tasks on tests/gdb/programs/asyncio_tasks.py: live, on a gcore of it, and live again
    with one task's object overwritten (py-tasks must still list the others and gdb answer)."""
    workdir = tempfile.mkdtemp(prefix="hangpy-gdb-")
    try:
        with cores.ScenarioProcess(interpreter, ASYNCIO_PROGRAM, workdir) as process:
            truth = process.wait_for_ground_truth()
            if "skip" in truth:
                return truth["skip"]
            live = gdb_session.run_gdb(options, gdb_session.target_args_live(process.pid),
                                       [("py-tasks", "py-tasks"), ("again", "py-tasks"),
                                        ("status", "hangpy")])
            core = process.take_core("gcore")
            # Everything of the task object past its object header (reference count and type; 32
            # bytes in a free-threaded build): its Future state, its coroutine, its name, what it
            # waits for.
            victim = truth["roles"]["request-handler"]
            header = 32 if args_free_threaded(interpreter) else 16
            corrupt = "python gdb.selected_inferior().write_memory(%d, b'\\x41' * 192)" % (
                victim + header)
            broken = gdb_session.run_gdb(options, gdb_session.target_args_live(process.pid),
                                         [("corrupt", corrupt), ("py-tasks", "py-tasks"),
                                          ("alive", "echo still answering\\n")])
            process.kill()
            from_core = gdb_session.run_gdb(
                options, gdb_session.target_args_core(interpreter.executable, core),
                [("py-tasks", "py-tasks")])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    check_tasks(checks, "live", live.output("py-tasks"), truth)
    checks.expect(live.output("again") == live.output("py-tasks"),
                  "py-tasks twice at one stop differ: %s" % live.output("again"))
    counts = [match.group(1) for match in (re.search(r"(\d+) analyses so far", line)
                                           for line in live.output("status")) if match]
    checks.expect(counts == ["1"], "py-tasks twice, then hangpy: %s analyses, want 1: %s"
                  % (counts, live.output("status")))
    check_tasks(checks, "gcore", from_core.output("py-tasks"), truth)
    lines = broken.output("py-tasks")
    checks.expect(broken.output("alive") == ["still answering"],
                  "gdb after py-tasks on a corrupt task: %s" % broken.output("alive"))
    _, _, nodes = parse_task_forest(lines)
    sleeper = [task for task in truth["tasks"] if task["address"] == truth["roles"]["sleeper"]]
    want = [(c[3] if tuple(int(p) for p in truth["version"].split(".")[:2]) >= (3, 11) else c[2])
            for c in sleeper[0]["coroutines"]] if sleeper else []
    survivors = [node for node in nodes if [c[0] for c in node["coroutines"]] == want
                 and "asyncio.sleep(3600)" in node["status"]]
    checks.expect(lines[:1] and lines[0].startswith("asyncio: ") and survivors,
                  "py-tasks with a corrupt task lost the others: %s" % lines)
    for result in (live, broken, from_core):
        for line in result.text.splitlines():
            checks.expect("Python Exception" not in line and "internal error" not in line,
                          "gdb printed: %s" % line)
    return None


def run_loading_and_help(options, checks):
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        time.sleep(0.1)
        commands = [("load-other", "load ./a.out"), ("import-again", "python import hangpy"),
                    ("load-again", "load hangpy")]
        commands += [("help %s" % name, "help %s" % name) for name in COMMANDS_WITH_HELP]
        result = gdb_session.run_gdb(options, gdb_session.target_args_live(sleeper.pid), commands)
    finally:
        sleeper.kill()
        sleeper.wait()
    refusal = result.output("load-other")
    checks.expect(len(refusal) == 1 and "gdb -nx" in refusal[0],
                  "load with another argument: %s" % refusal)
    checks.expect(result.output("import-again") == [] and result.output("load-again") == [],
                  "loading twice: %s %s" % (result.output("import-again"),
                                            result.output("load-again")))
    for name in COMMANDS_WITH_HELP:
        lines = result.output("help %s" % name)
        checks.expect(len(lines) >= 2 and "Usage: %s" % name in "\n".join(lines),
                      "help %s: %s" % (name, lines))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interpreter", required=True,
                        choices=interpreters.names("gdb"))
    parser.add_argument("--hangpy-init", required=True)
    return parser.parse_args()


def main():
    args = parse_args()
    problem = gdb_session.environment_problem()
    if problem or not os.path.exists(args.hangpy_init):
        print("SKIP: %s" % (problem or "%s not built" % args.hangpy_init))
        return SKIP
    interpreter = interpreters.resolve(args.interpreter)
    if interpreter is None:
        print("SKIP: " + interpreters.not_installed(args.interpreter))
        return SKIP
    settings = interpreters.INTERPRETERS[args.interpreter].gdb
    options = gdb_session.GdbOptions(hangpy_init=args.hangpy_init,
                                      hide_debug_info=settings["hide_debug_info"])
    cases = [
        ("py-up/py-down/py-list/py-locals/py-print",
         lambda checks: run_navigation_and_variables(options, interpreter, checks)),
        ("thread without Python", lambda checks: run_thread_without_python(options, interpreter,
                                                                           checks)),
        ("process without Python", lambda checks: run_without_python(options, checks)),
        ("corrupted frame pointer",
         lambda checks: run_corrupted_frame_pointer(interpreter, args.hangpy_init, checks)),
        ("py-tasks", lambda checks: run_asyncio_tasks(options, interpreter, checks)),
        ("load and help", lambda checks: run_loading_and_help(options, checks)),
        ("CPython's test_print_after_up",
         lambda checks: cpython_gdb_cases.run_print_after_up(options, interpreter, checks)),
        ("CPython's test_wrapper_call",
         lambda checks: cpython_gdb_cases.run_wrapper_call(options, interpreter, checks)),
    ]
    results = Results()
    for name, case in cases:
        checks = Checks()
        try:
            skipped = case(checks)
        except (cores.CoreError, subprocess.TimeoutExpired, KeyError) as error:
            checks.problems.append("%s: %s" % (type(error).__name__, error))
            skipped = None
        if skipped:
            results.report("SKIP", "%s (%s)" % (name, skipped), checks.problems)
        else:
            results.check(name, checks.problems)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
