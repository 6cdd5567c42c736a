#!/usr/bin/python3
"""Integration test: several interpreters in one process are all reported. Runs
tests/programs/subinterpreter.py (3.12 on), takes a gcore core, and checks that coreanalyze
reports the main thread in interpreter 0 and the subinterpreter's worker in another interpreter,
each with the frames the interpreter itself reported.

Exit status: 0 passed, 1 failed, 77 no interpreter with subinterpreters installed.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
from results import Results  # noqa: E402

PROGRAM = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "programs",
                       "subinterpreter.py")
NAMES = ["pyenv-3.12", "pyenv-3.13", "local-3.13t", "local-3.14t"]


def run_one(coreanalyze, interpreter, workdir):
    truth_path = os.path.join(workdir, "truth.json")
    process = subprocess.Popen([interpreter.executable, PROGRAM, truth_path],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 30
        while not os.path.exists(truth_path):
            if process.poll() is not None or time.time() > deadline:
                process.kill()  # its stderr ends (read to the end below) once it is gone
                return ["no ground truth (exit %s): %s" % (
                    process.wait(), process.stderr.read().decode("utf-8", "replace"))]
            time.sleep(0.05)
        truth = json.load(open(truth_path))
        if "skip" in truth:
            return None
        time.sleep(0.3)  # the reporter thread exits
        core = os.path.join(workdir, "core.%d" % process.pid)
        try:
            cores.gcore(process.pid, core)  # sparse; gdb's own words when it fails
        except cores.CoreError as error:
            return [str(error)]
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    result = subprocess.run([coreanalyze, core, "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    if result.returncode != 0:
        return ["coreanalyze %s --json: exit %d: %s" % (
            core, result.returncode, result.stderr.decode("utf-8", "replace").strip())]
    report = json.loads(result.stdout.decode("utf-8"))
    problems = []
    kinds = sorted(thread["interpreter"] == 0 for thread in truth["threads"].values())
    if kinds != [False, True]:
        problems.append("the ground truth should hold the main thread and the subinterpreter's "
                        "worker: %s" % truth["threads"])
    interpreter_ids = set(thread["interpreter_id"] for thread in report["threads"])
    if len(interpreter_ids) < 2:
        problems.append("only interpreters %s reported" % sorted(interpreter_ids))
    for ident, expected in truth["threads"].items():
        found = [thread for thread in report["threads"] if str(thread["thread_id"]) == ident
                 and thread["frames"]]
        if len(found) != 1:
            problems.append("thread %s: %d reported with frames, want 1" % (ident, len(found)))
            continue
        thread = found[0]
        want_main = expected["interpreter"] == 0
        if (thread["interpreter_id"] == 0) != want_main:
            problems.append("thread %s: interpreter %s" % (ident, thread["interpreter_id"]))
        got = [[frame["file"], frame["line"], frame["function"]] for frame in thread["frames"]]
        if got != expected["frames"]:
            problems.append("thread %s: frames %s, want %s" % (ident, got, expected["frames"]))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    for name, interpreter in interpreters.each_installed(NAMES, results):
        workdir = tempfile.mkdtemp(prefix="hangpy-subinterp-")
        try:
            problems = run_one(args.coreanalyze, interpreter, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        if problems is None:
            results.report("SKIP", name, ["no subinterpreters"])
        else:
            results.check(name, problems)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
