#!/usr/bin/python3
"""Integration test: coreanalyze --native names the built-in each Python frame is calling, as
libpython.py's py-bt does, read from memory. tests/programs/builtin_calls.py blocks in Python
code called by sorted() (a builtin_function_or_method) and by list.__init__ through a
method-wrapper, and in a lock's __enter__, and records each call's line (addresses from id()); each
must appear in the text output, indented under the C frames, above the Python frame that makes the
call. The calls it records as returned (another lock's __enter__ and __exit__, time.sleep; the
held lock's __exit__) must not appear.

Exit status: 0 passed, 1 failed, 77 no interpreter of the list is installed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
from results import Results  # noqa: E402

PROGRAM = "builtin_calls.py"
NATIVE_FRAME = re.compile(r"^  #\d+ +0x[0-9a-f]+ in ")
PYTHON_FRAME = re.compile(r"^  #\d+ +\(Python\) ")


class NoEvalLoopFrames(Exception):
    """The native stacks name no eval-loop frame (the interpreter's symbols are not there), so
    the Python frames cannot be placed among them, nor the calls between them."""


def check_core(coreanalyze, core, interpreter, truth):
    result = run_scenarios.run_coreanalyze(coreanalyze, core, interpreter, ["--native"])
    lines = result.stdout.decode("utf-8", "replace").splitlines()
    if result.returncode not in (0, 5) or not lines:
        return ["coreanalyze --native exited %d: %s"
                % (result.returncode, result.stderr.decode("utf-8", "replace").strip())]
    # Spliced Python frames stand where their eval-loop frames were, with native frames after
    # them (thread start); unplaced ones all come last.
    kinds = []  # per frame line; a thread's header resets the sequence
    for line in lines:
        if line.startswith("Thread "):
            kinds.append("thread")
        elif PYTHON_FRAME.match(line) or NATIVE_FRAME.match(line):
            kinds.append("python" if PYTHON_FRAME.match(line) else "native")
    if not any(a == "python" and b == "native" for a, b in zip(kinds, kinds[1:])):
        raise NoEvalLoopFrames()
    problems = []
    for call in truth["calls"]:
        line = "       " + call
        if line not in lines:
            problems.append("no line %r" % line)
            continue
        following = lines[lines.index(line) + 1]
        if "(Python) File" not in following:
            problems.append("%r is followed by %r, not by the Python frame calling it"
                            % (call, following))
    for call in truth.get("returned_calls", []):
        if "       " + call in lines:
            problems.append("%r returned before the thread blocked, but is named as a call in "
                            "progress" % call)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--interpreter", action="append",
                        help="only these (default: every integration interpreter)")
    args = parser.parse_args()
    results = Results()
    for name, interpreter in interpreters.each_installed(
            args.interpreter or interpreters.names("integration"), results):
        try:
            # bullseye's 2.7 once failed here about 1 core in 2: sorted()'s object is in no native
            # stack slot, only in the calling frame's value stack, which coreanalyze now reads.
            problems = run_once(args.coreanalyze, interpreter)
            results.check(name, problems)
        except NoEvalLoopFrames:
            results.report("SKIP", name, ["no eval-loop frame in the native stacks (no symbol "
                                          "for it): the Python frames cannot be placed"])
        except (cores.CoreError, subprocess.TimeoutExpired, KeyError) as error:
            results.check(name, ["%s: %s" % (type(error).__name__, error)])
    return results.finish()


def run_once(coreanalyze, interpreter):
    """Runs the program, takes its core and returns the problems check_core finds."""
    workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-calls-")
    try:
        truth, core = cores.truth_and_core(interpreter, PROGRAM, workdir)
        return check_core(coreanalyze, core, interpreter, truth)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
