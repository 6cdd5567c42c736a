"""Two of CPython's own test_gdb cases, with its programs, gdb commands and expected output
(Lib/test/test_gdb: test_misc.StackNavigationTests.test_print_after_up and
test_backtrace.PyBtTests.test_wrapper_call), run with hangpy instead of libpython.py:

  print after up  a breakpoint in builtin_id under id(42), in baz(), which bar() called through a
                  C function (_testcapi.pyobject_vectorcall); two py-up stop at baz and then at
                  that C call's line ("<built-in method pyobject_vectorcall ...>"), where py-print
                  answers for bar(), the Python frame that made the call: c = 3, b = 2, a = 1.
  wrapper call    a breakpoint on wrapper_call itself (list.__init__ through super()): py-bt shows
                  "<method-wrapper '__init__' of MyList object at 0x...>", the object found in the
                  innermost frame's registers (no stack holds it yet).

CPython runs them on its own debug build; here they run on the interpreter under test, without
its debug info where the row hides it. Each case says why it skips: no _testcapi (Debian's
builds), or no symbol for builtin_id / wrapper_call (a stripped interpreter without its debug
file: gdb cannot set the breakpoint, as CPython's test could not).
"""
import re
import subprocess

import gdb_session

PRINT_AFTER_UP_PROGRAM = """
from _testcapi import pyobject_vectorcall

def foo(a, b, c):
    bar(a, b, c)

def bar(a, b, c):
    pyobject_vectorcall(baz, (a, b, c), None)

def baz(*args):
    id(42)

foo(1, 2, 3)
"""
CALL_LINE = re.compile(r"^#\d+ <built-in (method|function) pyobject_vectorcall\b")
PRINT_AFTER_UP_EXPECTED = re.compile(r".*\nlocal 'c' = 3\nlocal 'b' = 2\nlocal 'a' = 1\n.*", re.DOTALL)

WRAPPER_CALL_PROGRAM = """
class MyList(list):
    def __init__(self):
        super(*[]).__init__()   # wrapper_call()

id("first break point")
l = MyList()
"""
WRAPPER_CALL_EXPECTED = re.compile(r"<method-wrapper u?'__init__' of MyList object at ")
# `info address F` with DWARF, and with an ELF symbol only.
KNOWN_SYMBOL = re.compile(r'^Symbol "\w+" is (a function at address|at) 0x')


def _python_has(interpreter, statement):
    result = subprocess.run([interpreter.executable, "-S", "-c", statement], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, timeout=60)
    return result.returncode == 0


def _gdb_knows(options, interpreter, function):
    """Whether gdb finds `function` in the interpreter once it runs (a shared libpython loads
    then): `info address` after a breakpoint at main."""
    result = gdb_session.run_gdb(options, ["--args", interpreter.executable, "-S", "-c", "pass"],
                                 [("start", "break main"), ("run", "run"),
                                  ("address", "info address %s" % function)])
    try:
        return any(KNOWN_SYMBOL.search(line) for line in result.output("address"))
    except KeyError:
        return False


def run_print_after_up(options, interpreter, checks):
    """CPython's test_print_after_up; returns why it skips, or None."""
    if not _python_has(interpreter, "from _testcapi import pyobject_vectorcall"):
        return "the interpreter has no _testcapi.pyobject_vectorcall"
    if not _gdb_knows(options, interpreter, "builtin_id"):
        return "gdb has no symbol for builtin_id in this interpreter"
    commands = [("break", "set breakpoint pending on"), ("break-id", "break builtin_id"), ("run", "run"),
                ("full", "py-bt-full"), ("up-1", "py-up"), ("up-2", "py-up"), ("print", "py-print c"),
                ("print-b", "py-print b"), ("print-a", "py-print a"), ("locals", "py-locals"), ("list", "py-list")]
    result = gdb_session.run_gdb(options, ["--args", interpreter.executable, "-S", "-c", PRINT_AFTER_UP_PROGRAM],
                                 commands)
    # The test's own view: every command's output in one text.
    text = "\n" + "\n".join(line for name in ("up-1", "up-2", "print", "print-b", "print-a")
                            for line in result.output(name)) + "\n"
    checks.expect(PRINT_AFTER_UP_EXPECTED.match(text),
                  "print after up: no \"local 'c' = 3 / 'b' = 2 / 'a' = 1\" in:%s" % text)
    # Where py-bt-full lists the C call (from 3.13 pyobject_vectorcall tail-calls
    # PyObject_Vectorcall: no frame of its own runs it, and py-up goes from baz to bar, where the
    # lines above hold trivially), the second py-up stops at it and py-locals answers for bar.
    if not any(CALL_LINE.search(line) for line in result.output("full")):
        checks.expect(result.output("up-2")[:1] and " in bar (" in result.output("up-2")[0],
                      "print after up: no C call's line, and the second py-up is not at bar: %s"
                      % result.output("up-2"))
        return None
    checks.expect(any(CALL_LINE.search(line) for line in result.output("up-2")),
                  "print after up: the second py-up is not at pyobject_vectorcall's line: %s"
                  % result.output("up-2"))
    locals_lines = result.output("locals")
    checks.expect(locals_lines[:4] == ["Locals for bar", "a = 1", "b = 2", "c = 3"],
                  "print after up: py-locals at the C call's line is not bar's: %s" % locals_lines)
    # py-list has no Python frame at a C call's line, as libpython's.
    checks.expect(result.output("list") == ["Unable to read information on python frame"],
                  "print after up: py-list at the C call's line: %s" % result.output("list"))
    return None


def run_wrapper_call(options, interpreter, checks):
    """CPython's test_wrapper_call; returns why it skips, or None."""
    if not _python_has(interpreter, WRAPPER_CALL_PROGRAM):
        return "the program does not run under this interpreter (Python 2 has no argument-less super())"
    if not _gdb_knows(options, interpreter, "wrapper_call"):
        return "gdb has no symbol for wrapper_call in this interpreter"
    commands = [("break", "set breakpoint pending on"), ("break-id", "break builtin_id"), ("run", "run"),
                ("break-wrapper", "break wrapper_call"), ("continue", "continue"), ("py-bt", "py-bt")]
    result = gdb_session.run_gdb(options, ["--args", interpreter.executable, "-S", "-c", WRAPPER_CALL_PROGRAM],
                                 commands)
    lines = result.output("py-bt")
    checks.expect(any(WRAPPER_CALL_EXPECTED.search(line) for line in lines),
                  "wrapper call: py-bt has no <method-wrapper '__init__' of MyList object at ...> line: %s"
                  % lines)
    checks.expect(any("in __init__" in line for line in lines),
                  "wrapper call: py-bt lacks MyList.__init__'s frame: %s" % lines)
    return None
