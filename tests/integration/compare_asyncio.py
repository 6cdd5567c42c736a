"""Compare coreanalyze's "asyncio" section (docs: the JSON of issue 12) with the "asyncio" section
of a ground truth (tests/programs/asyncio_hang_tasks.py says what it holds).

Tasks are matched by address (a Task's id() is its address), so this works before 3.8 too, where
tasks have no names. Every check returns a list of problems; checks() gives them by name so that a
test can report each on its own line.
"""
import re

# The text section's first line; its deadlock lines (one per await cycle) follow it.
HEADER = re.compile(r"^asyncio: (\d+) tasks\b")
# What the forest draws before a task's coroutine lines.
TREE_DRAWING = " \u2502\u251c\u2514\u2500"  # space, │, ├, └, ─
# awaits.kind values whose "tasks" lists the awaited tasks.
KINDS_WITH_TASKS = ("task", "gather", "taskgroup")


def address(text):
    """An address as an int, from coreanalyze's or the ground truth's hex string, else None."""
    try:
        return int(text, 16)
    except (TypeError, ValueError):
        return None


def addresses(texts):
    return sorted(address(text) for text in texts or [])


def has_names(truth):
    """Task names exist from 3.8 (Task.get_name)."""
    return any(task.get("name") is not None for task in truth["tasks"].values())


def _truth_tasks(truth):
    return dict((address(key), task) for key, task in truth["tasks"].items())


def _found_tasks(section):
    return dict((address(task.get("address")), task) for task in section.get("tasks") or [])


def _label(truth_task):
    return "task %s" % truth_task["role"]


def _state(truth_task):
    """coreanalyze's name of the task's state. None of the ground truth's tasks runs when the
    process is read: the loop waits in its selector."""
    if truth_task["cancelled"]:
        return "cancelled"
    return "done" if truth_task["done"] else "pending"


def _name_of(truth, key):
    task = _truth_tasks(truth).get(key)
    return task["role"] if task else "0x%x" % key


def check_section(truth, section):
    problems = []
    want = len(truth["tasks"])
    if section.get("tasks_total") != want:
        problems.append("tasks_total %r, the ground truth has %d tasks"
                        % (section.get("tasks_total"), want))
    if len(section.get("tasks") or []) != want:
        problems.append("%d tasks listed, the ground truth has %d"
                        % (len(section.get("tasks") or []), want))
    for warning in section.get("warnings") or []:
        problems.append("asyncio warning: %s" % warning)
    return problems


def check_tasks(truth, section):
    """The same tasks (addresses), names (3.8+) and states."""
    problems = []
    want, found = _truth_tasks(truth), _found_tasks(section)
    for key in sorted(set(want) - set(found)):
        problems.append("%s (0x%x) missing" % (_label(want[key]), key))
    for key in sorted(set(found) - set(want)):
        problems.append("task 0x%x (%r) is not in asyncio.all_tasks()"
                        % (key, found[key].get("name")) if key is not None
                        else "a task with address %r" % found[key].get("address"))
    for key in sorted(set(want) & set(found)):
        truth_task, task = want[key], found[key]
        if truth_task["name"] is not None and task.get("name") != truth_task["name"]:
            problems.append("%s: name %r, want %r" % (_label(truth_task), task.get("name"),
                                                      truth_task["name"]))
        if task.get("state") != _state(truth_task):
            problems.append("%s: state %r, want %r" % (_label(truth_task), task.get("state"),
                                                       _state(truth_task)))
        if task.get("state") != "running" and task.get("thread") is not None:
            problems.append("%s: thread %r for a task that is not running"
                            % (_label(truth_task), task.get("thread")))
    return problems


def _common(truth, section):
    want, found = _truth_tasks(truth), _found_tasks(section)
    return [(want[key], found[key]) for key in sorted(set(want) & set(found))]


def _frame_text(function, file_name, line):
    return "%s at %s:%s" % (function, file_name, line)


def check_coroutine_stacks(truth, section):
    """Each task's coroutine_stack (function, file, line) is the chain of coroutines the task is
    suspended in, innermost first, as the interpreter walks it (cr_await); its outermost entry is
    what Task.get_stack() shows for a suspended task."""
    problems = []
    for truth_task, task in _common(truth, section):
        want = [(c["function"], c["file"], c["line"]) for c in truth_task["coroutine_chain"]]
        got = [(f.get("function"), f.get("file"), f.get("line"))
               for f in task.get("coroutine_stack") or []]
        if got != want:
            problems.append("%s: coroutine_stack\n  %s\nwant (innermost first)\n  %s"
                            % (_label(truth_task), "\n  ".join(_frame_text(*f) for f in got),
                               "\n  ".join(_frame_text(*f) for f in want)))
            continue
        outermost = truth_task["get_stack"][-1:]  # get_stack() is outermost first
        if outermost and [list(got[-1][1:]) + [got[-1][0]]] != [list(outermost[0])]:
            problems.append("%s: outermost coroutine %s, Task.get_stack() says %s"
                            % (_label(truth_task), _frame_text(*got[-1]),
                               _frame_text(outermost[0][2], outermost[0][0], outermost[0][1])))
    return problems


def check_qualnames(truth, section):
    """The coroutines' qualified names (a coroutine object carries its __qualname__ from 3.5)."""
    problems = []
    for truth_task, task in _common(truth, section):
        want = [c["qualname"] for c in truth_task["coroutine_chain"]]
        got = [f.get("qualname") for f in task.get("coroutine_stack") or []]
        if len(got) == len(want) and got != want:
            problems.append("%s: qualnames %r, want %r" % (_label(truth_task), got, want))
    return problems


def check_awaits(truth, section):
    """What each task waits for: the kind, and for a task, gather or TaskGroup the tasks."""
    problems = []
    for truth_task, task in _common(truth, section):
        want = truth_task["awaits"]
        got = task.get("awaits") or {}
        if got.get("kind") != want["kind"]:
            problems.append("%s: awaits.kind %r (%r), want %r"
                            % (_label(truth_task), got.get("kind"), got.get("detail"),
                               want["kind"]))
        elif want["kind"] in KINDS_WITH_TASKS and addresses(got.get("tasks")) != addresses(
                want["tasks"]):
            problems.append("%s: awaits.tasks %s, want %s"
                            % (_label(truth_task), _names(truth, got.get("tasks")),
                               _names(truth, want["tasks"])))
    return problems


def _names(truth, texts):
    return "[%s]" % ", ".join(_name_of(truth, key) for key in addresses(texts))


def check_awaited_by(truth, section):
    """The awaited-by edges: on 3.14+ asyncio.capture_call_graph's, before the program's own."""
    problems = []
    for truth_task, task in _common(truth, section):
        if addresses(task.get("awaited_by")) != addresses(truth_task["awaited_by"]):
            problems.append("%s: awaited_by %s, want %s"
                            % (_label(truth_task), _names(truth, task.get("awaited_by")),
                               _names(truth, truth_task["awaited_by"])))
    return problems


def check_cycles(truth, section):
    got = [sorted(addresses(cycle)) for cycle in section.get("cycles") or []]
    want = [sorted(addresses(cycle)) for cycle in truth["cycles"]]
    if sorted(got) != sorted(want):
        return ["cycles %s, want %s" % (
            ", ".join("[%s]" % ", ".join(_name_of(truth, key) for key in cycle) for cycle in got)
            or "none",
            ", ".join("[%s]" % ", ".join(_name_of(truth, key) for key in cycle) for cycle in want))]
    return []


def check_text(truth, text):
    """The text section: its header counts the tasks; one deadlock line per await cycle, naming
    its tasks (3.8+)."""
    problems = []
    headers = [HEADER.match(line) for line in text.splitlines()]
    headers = [match for match in headers if match]
    if len(headers) != 1:
        problems.append("%d lines 'asyncio: N tasks', want one" % len(headers))
    elif int(headers[0].group(1)) != len(truth["tasks"]):
        problems.append("header %r, the ground truth has %d tasks"
                        % (headers[0].group(0), len(truth["tasks"])))
    cycle_lines = [line for line in _section_lines(text) if line.startswith("deadlock:")]
    if len(cycle_lines) != len(truth["cycles"]):
        problems.append("%d lines 'deadlock: ...' in the asyncio section, want %d"
                        % (len(cycle_lines), len(truth["cycles"])))
    elif has_names(truth):
        by_address = _truth_tasks(truth)
        for line, cycle in zip(cycle_lines, truth["cycles"]):
            names = [by_address[address(key)]["name"] for key in cycle]
            if not all(name in line for name in names):
                problems.append("deadlock line %r does not name %s" % (line, " and ".join(names)))
    if has_names(truth):
        missing = sorted(task["name"] for task in truth["tasks"].values()
                         if task["name"] not in text)
        if missing:
            problems.append("tasks not named in the text: %s" % ", ".join(missing))
    return problems + _check_coroutine_lines(truth, text)


def _section_lines(text):
    """The lines of the asyncio section: from its header on (thread deadlocks come before)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if HEADER.match(line):
            return lines[index:]
    return []


def _check_coroutine_lines(truth, text):
    """Each task's coroutines appear as `coroutine <qualname> at <file>:<line>` lines, innermost
    first (the awaited-by forest may show a task more than once: any one place will do)."""
    lines = [line.lstrip(TREE_DRAWING).rstrip() for line in text.splitlines()]
    problems = []
    for task in sorted(truth["tasks"].values(), key=lambda task: task["role"]):
        wanted = ["coroutine %s at %s:%d" % (c["qualname"], c["file"], c["line"])
                  for c in task["coroutine_chain"]]
        starts = [i for i, line in enumerate(lines) if line == wanted[0]] if wanted else [0]
        if not any(lines[start:start + len(wanted)] == wanted for start in starts):
            problems.append("%s: no lines %r in a row" % (_label(task), wanted))
    return problems


CHECKS = [
    ("tasks", check_tasks),
    ("coroutine stacks", check_coroutine_stacks),
    ("qualnames", check_qualnames),
    ("awaits", check_awaits),
    ("awaited_by", check_awaited_by),
    ("cycle", check_cycles),
]


def checks(truth, report):
    """[(check name, problems)] for coreanalyze's JSON `report` against the ground truth's
    "asyncio" section `truth`."""
    section = report.get("asyncio")
    if not isinstance(section, dict):
        return [("section", ["no \"asyncio\" section in coreanalyze's JSON"])]
    return [("section", check_section(truth, section))] + [
        (name, check(truth, section)) for name, check in CHECKS]


def compare(truth, report):
    """Every problem of checks(), each prefixed with its check's name."""
    return ["asyncio %s: %s" % (name, problem) for name, problems in checks(truth, report)
            for problem in problems]
