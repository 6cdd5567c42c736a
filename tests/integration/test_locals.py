#!/usr/bin/python3
"""Integration test: coreanalyze --locals on real cores. tests/programs/locals_values.py blocks
in a function whose locals are one of each kind (int, big int, float, bool, None, str or Python 2
unicode, bytes, tuple, list, dict, an instance, a function, a built-in, a lock) and records the
repr each must have (ground truth written by the program: Python's repr, or libpython.py's shape
built from id()). The JSON's "locals" of that frame must hold exactly those names and reprs, in
the code object's order of arguments then locals, and the text must print them under the frame.

Exit status: 0 passed, 1 failed, 77 no interpreter of the list is installed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
from results import Results  # noqa: E402

PROGRAM = "locals_values.py"
FUNCTION = "hold_values"
# Arguments first, then locals in the order the function binds them (the code object's order).
ORDER = ["lock", "count", "negative", "ratio", "flag", "nothing", "text", "data", "pair", "items",
         "table", "point", "function", "measure"]


def frame_locals(document):
    for thread in document["threads"]:
        for frame in thread["frames"]:
            if frame["function"] == FUNCTION:
                return frame.get("locals"), frame.get("locals_error")
    return None, "no frame %s in the JSON" % FUNCTION


def check_core(coreanalyze, core, interpreter, truth):
    problems = []
    expected = truth["locals"][FUNCTION]
    result = run_scenarios.run_coreanalyze(coreanalyze, core, interpreter, ["--json", "--locals"])
    if result.returncode != 0:
        return ["coreanalyze --json --locals exited %d: %s"
                % (result.returncode, result.stderr.decode("utf-8", "replace").strip())]
    found, error = frame_locals(json.loads(result.stdout.decode("utf-8")))
    if found is None:
        return ["%s: no locals: %s" % (FUNCTION, error)]
    # The function's own locals come first; `expected` (built last) is the only other one.
    names = [entry["name"] for entry in found]
    want_names = ORDER + ["expected"]
    if names != want_names:
        problems.append("names %r, want %r" % (names, want_names))
    by_name = dict((entry["name"], entry) for entry in found)
    for name in ORDER:
        got = by_name.get(name, {}).get("repr")
        if got != expected[name]:
            problems.append("%s = %r, want %r" % (name, got, expected[name]))
    if by_name.get("lock", {}).get("address") != expected["lock"].split("remote ")[-1][:-1]:
        problems.append("lock's address %r does not match its repr" % by_name.get("lock"))
    text = run_scenarios.run_coreanalyze(coreanalyze, core, interpreter, ["--locals"])
    lines = text.stdout.decode("utf-8", "replace").splitlines()
    for name in ("count", "point", "measure"):
        line = "      %s = %s" % (name, expected[name])
        if line not in lines:
            problems.append("text output has no line %r" % line)
    plain = run_scenarios.run_coreanalyze(coreanalyze, core, interpreter, [])
    if "      count = 42" in plain.stdout.decode("utf-8", "replace").splitlines():
        problems.append("locals printed without --locals")
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
        workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-locals-")
        try:
            truth, core = cores.truth_and_core(interpreter, PROGRAM, workdir)
            results.check(name, check_core(args.coreanalyze, core, interpreter, truth))
        except (cores.CoreError, subprocess.TimeoutExpired, KeyError) as error:
            results.check(name, ["%s: %s" % (type(error).__name__, error)])
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
