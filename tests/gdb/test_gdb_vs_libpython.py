#!/usr/bin/python3
"""gdb test: hangpy's py-bt, py-list, py-locals and py-print against CPython's libpython.py
(Debian's python3.11-dbg) on the same live process: gdb runs twice, once with hangpy and Python's
debug info hidden, once with libpython.py auto-loaded and the debug info it needs.

What is compared (each remaining difference is documented in docs/gdb.md): the whole output,
line for line, with only addresses (0x...) left out of the comparison:
  py-bt     every line: `File` lines, source lines, "Waiting for the GIL", and the lines libpython prints for C calls
            ("<built-in method __enter__ of _thread.lock object at remote 0x...>"), which hangpy
            finds in memory without debug info. Where libpython could not read the call's
            object ("<optimized out>": Debian's build optimizes out wrapper_call's `wp`),
            hangpy's line naming a built-in call at that place is accepted.
  py-list   the whole listing, at the innermost Python frame.
  py-locals every "Locals for NAME" section: the innermost frame and the older frames its
            eval-loop call runs, with every value's repr (instances with their attributes).
  py-print  every local, `__name__` (global), `len` (builtin) and an unknown name.
The test also prints how many of libpython's lines hangpy matched (the parity measure).

Exit status: 0 passed, 1 failed, 77 gdb, the interpreter, libpython.py or the module is missing.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)
import cores  # noqa: E402
import gdb_compare  # noqa: E402
import gdb_session  # noqa: E402
import interpreters  # noqa: E402
from results import SKIP, Results  # noqa: E402

# why_gil_holder.py: two threads waiting for the GIL (libpython's "Waiting for the GIL", told
# without take_gil's symbol) and Thread objects sharing the empty tuple (libpython's per-repr
# elision: the second `_args=(...)`).
SCENARIOS = ("deadlock.py", "blocking_method.py", "blocking_generator.py", "unicode_names.py",
             "builtin_calls.py", "why_gil_holder.py")
UNKNOWN_NAME = "no_such_name_in_any_scope"
INFO_THREAD = re.compile(r"^\*?\s*(\d+)\s+Thread 0x[0-9a-f]+ \(LWP (\d+)\)")
ADDRESS = re.compile(r"0x[0-9a-f]+")
# py-bt-full's "#N": gdb's frame numbers, which differ between the two runs (with debug info gdb
# shows inlined C functions as frames of their own).
FRAME_NUMBER = re.compile(r"^#\d+ ")
MATCHED = [0, 0, 0]  # over all cases: libpython's lines hangpy matched, libpython's lines, others


def libpython_script(executable):
    return "/usr/share/gdb/auto-load%s-gdb.py" % os.path.realpath(executable)


def gdb_thread_numbers(lines):
    numbers = {}
    for line in lines:
        match = INFO_THREAD.match(line)
        if match:
            numbers[int(match.group(2))] = int(match.group(1))
    return numbers


def without_addresses(lines):
    return [FRAME_NUMBER.sub("#? ", ADDRESS.sub("0x?", line)) for line in lines]


# Where libpython cannot read the C call's object (`wp` of wrapper_call is optimized out in
# Debian's build) it prints one of these; hangpy, reading memory, names the call.
# py-bt indents the line; py-bt-full numbers it ("#? " once numbers are masked).
LIBPYTHON_UNREADABLE = re.compile(r"^(  |#\? )(<optimized out>|.*\(unable to read \w+.*\)>?)$")
CALL_LINE = re.compile(r"^(  |#\? )<(built-in (method|function) |method-wrapper ).*>$")


def accept_named_calls(want, got):
    """libpython's lines, with each call it could not read replaced by hangpy's line at the same
    place when that names a built-in call."""
    accepted = list(want)
    for index, line in enumerate(want):
        if (LIBPYTHON_UNREADABLE.match(line) and index < len(got)
                and CALL_LINE.match(got[index])):
            accepted[index] = got[index]
    return accepted


def innermost_section(lines):
    """py-locals' first "Locals for NAME" section: the innermost frame's."""
    section = []
    for line in lines:
        if line.startswith("Locals for ") and section:
            break
        section.append(line)
    return section


def thread_commands(number, names, libpython):
    prefix = "t%d-" % number
    commands = [(prefix + "select", "thread %d" % number), (prefix + "py-bt", "py-bt"),
                (prefix + "py-bt-full", "py-bt-full")]
    if libpython:  # its frame commands want the eval loop's frame selected
        commands.append((prefix + "frame", "frame function _PyEval_EvalFrameDefault"))
    commands += [(prefix + "py-list", "py-list"), (prefix + "py-locals", "py-locals")]
    for name in names + ["__name__", "len", UNKNOWN_NAME]:
        commands.append((prefix + "print-" + name, "py-print " + name))
    return commands


def compare_thread(number, names, mine, theirs):
    problems = []
    prefix = "t%d-" % number

    def expect_equal(label, want, got):
        if not want:  # an empty answer from both would prove nothing
            problems.append("thread %d %s: libpython printed nothing to compare" % (number, label))
        elif want != got:
            problems.append("thread %d %s differs:\n      libpython: %s\n      hangpy:    %s"
                            % (number, label, want, got))

    for label, name in (("py-bt", "py-bt"), ("py-bt-full", "py-bt-full"), ("py-list", "py-list"),
                        ("py-locals", "py-locals")):
        got = without_addresses(mine.output(prefix + name))
        expect_equal(label, accept_named_calls(without_addresses(theirs.output(prefix + name)), got),
                     got)
    for name in names + ["__name__", "len", UNKNOWN_NAME]:
        expect_equal("py-print " + name, without_addresses(theirs.output(prefix + "print-" + name)),
                     without_addresses(mine.output(prefix + "print-" + name)))
    return problems


def matching_lines(mine, theirs, commands):
    """(lines of libpython's output that hangpy printed identically, addresses aside; all of
    libpython's lines; hangpy's lines libpython did not print), over the full output of every
    compared command: the parity measure."""
    matched = total = extra = 0
    for name in commands:
        got = without_addresses(mine.output(name))
        want = accept_named_calls(without_addresses(theirs.output(name)), got)
        same = sum(block.size for block in
                   difflib.SequenceMatcher(None, want, got, autojunk=False).get_matching_blocks())
        total += len(want)
        matched += same
        extra += len(got) - same
    return matched, total, extra


def run_case(interpreter, init, program):
    workdir = tempfile.mkdtemp(prefix="hangpy-gdb-")
    hangpy = gdb_session.GdbOptions(hangpy_init=init, hide_debug_info=True)
    libpython = gdb_session.GdbOptions(libpython=True)
    try:
        with cores.ScenarioProcess(interpreter, program, workdir) as process:
            truth = process.wait_for_ground_truth()
            target = gdb_session.target_args_live(process.pid)
            probe = gdb_session.run_gdb(hangpy, target, [("info", "info threads")])
            numbers = gdb_thread_numbers(probe.output("info"))
            lwps = sorted(gdb_compare.truth_by_lwp(truth))
            names = {}
            for lwp in lwps:
                number = numbers[lwp]
                result = gdb_session.run_gdb(hangpy, target, [
                    ("select", "thread %d" % number), ("locals", "py-locals")])
                names[number] = [line.partition(" = ")[0]
                                 for line in innermost_section(result.output("locals"))[1:]]
            runs = []
            for options, is_libpython in ((hangpy, False), (libpython, True)):
                commands = [("info", "info threads")]
                for lwp in lwps:
                    commands += thread_commands(numbers[lwp], names[numbers[lwp]], is_libpython)
                runs.append(gdb_session.run_gdb(options, target, commands))
        mine, theirs = runs
        problems = []
        if os.environ.get("HANGPY_SHOW_GDB"):
            print(mine.text, theirs.text)
        for run, label in ((mine, "hangpy"), (theirs, "libpython")):
            if gdb_thread_numbers(run.output("info")) != numbers:
                problems.append("%s's gdb numbered the threads differently" % label)
        for lwp in lwps:
            problems += compare_thread(numbers[lwp], names[numbers[lwp]], mine, theirs)
        compared = [name for name, _ in mine.sections
                    if re.match(r"t\d+-(py-|print-)", name)]
        counts = matching_lines(mine, theirs, compared)
        print("%s: %d of %d lines of libpython's output matched, %d other lines"
              % (program, counts[0], counts[1], counts[2]))
        for index in range(3):
            MATCHED[index] += counts[index]
        if "Traceback (most recent call first):" not in theirs.text:
            problems.append("libpython.py printed no traceback (is python3.11-dbg installed?)")
        return ("FAIL" if problems else "PASS"), problems
    except (cores.CoreError, subprocess.TimeoutExpired, KeyError) as error:
        return "FAIL", ["%s: %s" % (type(error).__name__, error)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# CPython's own test_gdb stops in a built-in's C function (a breakpoint on builtin_id under
# `id(42)`) and expects `#1 <built-in method id ...` (or #2) in py-bt-full, and py-up / py-down
# to stop at that line. Without debug info the breakpoint is set by address: the executable is
# not position-independent, so libpython's run tells where builtin_id is.
BREAKPOINT_PROGRAM = """
def foo(a, b, c):
    bar(a=a, b=b, c=c)

def bar(a, b, c):
    baz(a, b, c)

def baz(*args):
    id(42)

foo(1, 2, 3)
"""
FUNCTION_ADDRESS = re.compile(r"is a function at address (0x[0-9a-f]+)")
BREAKPOINT_COMMANDS = [("py-bt", "py-bt"), ("py-bt-full", "py-bt-full"),
                       ("down-0", "py-down"), ("up-1", "py-up"), ("down-1", "py-down"),
                       ("down-2", "py-down")]


def run_breakpoint_case(interpreter, init):
    hangpy = gdb_session.GdbOptions(hangpy_init=init, hide_debug_info=True)
    libpython = gdb_session.GdbOptions(libpython=True)
    target = ["--args", interpreter.executable, "-S", "-c", BREAKPOINT_PROGRAM]
    where = gdb_session.run_gdb(libpython, target, [("address", "info address builtin_id")])
    match = FUNCTION_ADDRESS.search("\n".join(where.output("address")))
    if not match:
        return "FAIL", ["libpython's gdb does not know builtin_id: %s" % where.output("address")]
    start = [("break", "break *%s" % match.group(1)), ("run", "run")]
    mine = gdb_session.run_gdb(hangpy, target, start + BREAKPOINT_COMMANDS)
    theirs = gdb_session.run_gdb(libpython, target, start + BREAKPOINT_COMMANDS)
    if os.environ.get("HANGPY_SHOW_GDB"):
        print(mine.text, theirs.text)
    problems = []
    for name in ("py-bt", "py-bt-full"):
        got = without_addresses(mine.output(name))
        want = without_addresses(theirs.output(name))
        if not want or want != got:
            problems.append("%s differs:\n      libpython: %s\n      hangpy:    %s" % (name, want, got))
    full = mine.output("py-bt-full")
    if not any(re.match(r"^#[12] <built-in (method|function) id\b", line) for line in full):
        problems.append("py-bt-full has no '#1|#2 <built-in method id' line: %s" % full)
    # libpython starts at that line: nothing newer; py-up reaches baz (libpython prints the
    # whole eval-loop call's frames from 3.11, hangpy one frame: the first lines agree); py-down
    # comes back to the call's line, and no further.
    for name, lines in (("down-0", 1), ("up-1", 1), ("down-1", 1), ("down-2", 1)):
        got = without_addresses(mine.output(name))[:lines]
        want = without_addresses(theirs.output(name))[:lines]
        if not want or want != got:
            problems.append("%s: libpython %s, hangpy %s" % (name, want, got))
    return ("FAIL" if problems else "PASS"), problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interpreter", required=True,
                        choices=[name for name in interpreters.names("gdb")
                                 if interpreters.INTERPRETERS[name].gdb["libpython"]])
    parser.add_argument("--hangpy-init", required=True)
    args = parser.parse_args()
    interpreter, _, skip = gdb_session.setup(args.interpreter, args.hangpy_init)
    if skip:
        print("SKIP: " + skip)
        return SKIP
    if not os.path.exists(libpython_script(interpreter.executable)):
        print("SKIP: no libpython.py at %s; to get it: scripts/install-deps (python3.11-dbg)"
              % libpython_script(interpreter.executable))
        return SKIP
    results = Results()
    for program in SCENARIOS:
        status, details = run_case(interpreter, args.hangpy_init, program)
        results.report(status, program, details)
    status, details = run_breakpoint_case(interpreter, args.hangpy_init)
    results.report(status, "breakpoint in builtin_id (CPython's test_gdb)", details)
    print("all cases: %d of %d lines of libpython's output matched, %d other lines"
          % tuple(MATCHED))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
