#!/usr/bin/python3
"""gdb test: hangpy's py-bt, bt (frame filter) and py-threads against each program's ground truth,
in gdb attached to the live process and in gdb on a core of it.

  test_gdb_stacks.py --interpreter debian-3.11 --hangpy-init build/gdbplugin/hangpy.gdb
  test_gdb_stacks.py --interpreter pyenv-3.11 --hangpy-init ... --mode core --scenario deadlock

Exit status: 0 all passed, 1 a mismatch, 2 usage, 77 gdb, the interpreter or the module is
missing (ctest's SKIP_RETURN_CODE).
"""
import argparse
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
import run_scenarios  # noqa: E402  (its SCENARIOS table: the programs and what they do)
from results import SKIP, Results  # noqa: E402

MODES = ("live", "core")
COMMANDS = [
    ("py-bt-all", "thread apply all py-bt"),
    ("bt-all", "thread apply all bt"),
    ("py-threads", "py-threads"),
    ("status", "hangpy"),
]


def check_output(result, truth):
    problems = []
    if result.returncode != 0:
        problems.append("gdb exited %d" % result.returncode)
    try:
        py_bt = gdb_session.split_threads(result.output("py-bt-all"))
        bt = gdb_session.split_threads(result.output("bt-all"))
        py_threads = result.output("py-threads")
        status = result.output("status")
    except KeyError as missing:
        return problems + ["gdb printed no output for %s; its output:\n%s"
                           % (missing, result.text[-3000:])]
    problems += gdb_compare.compare_thread_sections(
        "py-bt", truth, py_bt,
        lambda lines: gdb_compare.traceback_frames(lines))
    problems += gdb_compare.compare_thread_sections("bt", truth, bt,
                                                    gdb_compare.bt_python_frames, qualified=True)
    for lwp in gdb_compare.truth_by_lwp(truth):
        if not any("(LWP %d)" % lwp in line for line in py_threads):
            problems.append("py-threads: no line for LWP %d" % lwp)
    # One walk of the process served every command: the cache works.
    analyses = [re.search(r"(\d+) analyses so far", line) for line in status]
    counts = [int(match.group(1)) for match in analyses if match]
    if counts != [1]:
        problems.append("hangpy status says %s analyses, want 1: %s" % (counts, status))
    for line in result.text.splitlines():
        if "Python Exception" in line or "internal error" in line:
            problems.append("gdb printed: %s" % line)
    return problems


def run_case(options, interpreter, scenario, mode):
    program = run_scenarios.SCENARIOS[scenario][0]
    workdir = tempfile.mkdtemp(prefix="hangpy-gdb-")
    try:
        with cores.ScenarioProcess(interpreter, program, workdir) as process:
            truth = process.wait_for_ground_truth()
            if "skip" in truth:
                return "SKIP", [truth["skip"]]
            if mode == "live":
                target = gdb_session.target_args_live(process.pid)
            else:
                core = process.take_core("gcore")
                process.kill()  # the core alone from here on
                target = gdb_session.target_args_core(interpreter.executable, core)
            result = gdb_session.run_gdb(options, target, COMMANDS)
        problems = check_output(result, truth)
        return ("FAIL" if problems else "PASS"), problems
    except (cores.CoreError, subprocess.TimeoutExpired) as error:
        return "FAIL", [str(error)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interpreter", required=True,
                        choices=interpreters.names("gdb"))
    parser.add_argument("--hangpy-init", required=True, help="build/gdbplugin/hangpy.gdb")
    parser.add_argument("--mode", choices=MODES, action="append")
    parser.add_argument("--scenario", choices=sorted(run_scenarios.SCENARIOS), action="append")
    return parser.parse_args()


def main():
    args = parse_args()
    interpreter, options, skip = gdb_session.setup(args.interpreter, args.hangpy_init)
    if skip:
        print("SKIP: " + skip)
        return SKIP
    print("interpreter: %r, debug info hidden: %s" % (interpreter, options.hide_debug_info))
    results = Results()
    for scenario in args.scenario or sorted(run_scenarios.SCENARIOS):
        for mode in args.mode or MODES:
            status, details = run_case(options, interpreter, scenario, mode)
            results.report(status, "%s (%s)" % (scenario, mode), details)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
