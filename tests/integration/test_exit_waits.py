#!/usr/bin/python3
"""Integration test: a process that cannot exit, named with what its exit waits for (issue 21),
on real processes (tests/programs/cannot_exit.py writes the cause before the script ends):

- `thread`: the interpreter's exit waits for thread "worker", which is no daemon: the main
  thread is blocked on "the end of thread "worker" (LWP n) (at exit: ...)", kind join, its owner
  that thread (2.7's _exitfunc joins it; 3.x waits on its _tstate_lock; 3.13 on joins in C);
- `process` (3.4 on): multiprocessing's exit joins its child, which is no daemon: "child process
  N (at exit: ...)", kind child_process, child_pid N;
- `feeder`: multiprocessing's exit joins a queue's feeder thread, a daemon blocked writing what
  was put on a queue nobody reads: kind join, that thread, and a reason that says so (never
  "a thread that is not a daemon", which would contradict its daemon flag).

Each by --pid and from a gcore core. Exit status: 0 passed, 1 failed, 77 none installed.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
from blocked_program import BlockedProgram, NeverBlocked  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
from results import Results  # noqa: E402

NAMES = ("debian-3.11", "pyenv-2.7", "pyenv-3.9", "pyenv-3.12", "pyenv-3.13")
PROGRAM = "cannot_exit.py"
RUN_TIMEOUT = 60


def main_thread(document):
    for thread in document.get("threads") or []:
        if (thread.get("state") or {}).get("main_thread"):
            return thread
    return None


def check(document, mode, truth):
    thread = main_thread(document)
    if thread is None:
        return ["no main thread"]
    blocked = thread.get("blocked_on") or {}
    description = blocked.get("description") or ""
    problems = []
    if "(at exit: " not in description:
        problems.append("the main thread's wait does not say it is the exit's: %r" % description)
    if mode in ("thread", "feeder"):
        if blocked.get("kind") != "join" or 'the end of thread "%s"' % truth["worker"] not in description:
            problems.append("blocked on %r, expected the end of thread %r" % (blocked, truth["worker"]))
        if truth.get("worker_native_id") and blocked.get("owner_native_thread_id") != truth["worker_native_id"]:
            problems.append("owner LWP %r, expected %r" % (blocked.get("owner_native_thread_id"), truth["worker_native_id"]))
        if truth.get("daemon") and "not a daemon" in description:
            problems.append("the reason contradicts the joined thread's daemon flag: %r" % description)
        if mode == "feeder" and "feeder thread (a daemon) must first write" not in description:
            problems.append("the reason does not say the queue's feeder must write first: %r" % description)
    elif blocked.get("kind") != "child_process" or blocked.get("child_pid") != truth["child_pid"]:
        problems.append("blocked on %r, expected child process %d" % (blocked, truth["child_pid"]))
    return problems


def one_case(coreanalyze, interpreter, mode, workdir):
    truth_path = os.path.join(workdir, "truth-%s.json" % mode)
    argv = interpreter.command(interpreter.guest_path(workdir), [
        interpreter.guest_path(os.path.join(cores.PROGRAMS, PROGRAM)), mode, interpreter.guest_path(truth_path)])
    try:
        with BlockedProgram(argv, workdir, truth_path, env=cores.scenario_environment()) as program:
            truth = program.truth
            problems = []
            for label, target in (("--pid", ["--pid", str(truth["pid"])]),
                                  ("gcore", [cores.gcore(truth["pid"], os.path.join(workdir, "core.%s" % mode))])):
                result = subprocess.run([coreanalyze, "--json"] + target, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
                if result.returncode != 0:
                    problems.append("%s: exit %d: %s" % (label, result.returncode, result.stderr.decode()[-300:]))
                    continue
                problems += ["%s: %s" % (label, problem) for problem in check(json.loads(result.stdout), mode, truth)]
            return problems
    except NeverBlocked as error:
        return [str(error)]


def main():
    args = interpreters.driver_arguments(__doc__)
    results = Results()
    for name, interpreter in interpreters.each_installed(args.interpreter or NAMES, results):
        workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-exit-")
        try:
            for mode in ("thread", "process", "feeder"):
                if mode == "process" and name == "pyenv-2.7":
                    results.report("SKIP", "%s: process" % name, ["multiprocessing contexts need Python 3.4"])
                    continue
                results.check("%s: %s: the exit's wait named" % (name, mode),
                              one_case(args.coreanalyze, interpreter, mode, workdir))
        except cores.CoreError as error:
            results.report("FAIL", "%s: %s" % (name, error))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
