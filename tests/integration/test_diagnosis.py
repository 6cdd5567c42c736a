#!/usr/bin/python3
"""Integration test: "why is it stuck" (thread state, blocked on, deadlock cycles) on real cores.
For each interpreter present, run each why-stuck scenario, take a core, and check coreanalyze's
--json "state"/"blocked_on"/"deadlocks" (and the text's opening deadlock line) against what the
program wrote about itself (names, LWPs, the child's pid, the mutex's address):

- deadlock.py: one cycle of worker-ab and worker-ba, each blocked on a Lock held by the other;
  the main thread joins worker-ab;
- why_rlock_event.py: rlock-waiter blocked on an RLock owned by rlock-owner (2 acquisitions),
  rlock-owner (a daemon) on an Event;
- why_subprocess.py: the main thread waits for its child (the pid it wrote), a thread on an Event;
- why_pthread_mutex.py (--native): mutex-waiter blocked on the pthread mutex, owned by mutex-owner;
- why_misc_waits.py: one thread per wait (queue.Queue get, Semaphore, Condition, Barrier,
  time.sleep, socket recv, select, multiprocessing Queue get), each blocked on its kind;
- why_gc.py: "collector" is inside gc.collect() (a finalizer that never returns): in_gc from
  the interpreter's `collecting` flag (3.7 on);
- why_pool_starves.py (3.6 on): a ThreadPoolExecutor's only worker waits in Future.result for a
  task it submitted to its own pool: one deadlock of that worker, its line, first in the text;
- why_gil_holder.py: "regex" holds the GIL in _sre; both spinners wait for it (from the GIL's
  futex without native frames, from take_gil with them), held by "regex".

Exit status: 0 passed, 1 failed, 77 no interpreter of the list is installed.
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
from results import Results  # noqa: E402

PROGRAMS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "programs")
sys.path.insert(0, PROGRAMS)
import groundtruth  # noqa: E402  (marker_line: the programs' own marked lines)

NAMES = ["debian-3.11", "pyenv-2.7", "pyenv-3.6", "pyenv-3.7", "pyenv-3.8", "pyenv-3.9",
         "pyenv-3.10", "pyenv-3.11", "pyenv-3.12", "pyenv-3.13", "trixie-3.13", "sid-3.14",
         "sid-3.15"]


def run(coreanalyze, core, interpreter, args):
    argv = [coreanalyze, core, "--no-color"] + args
    if interpreter.root:
        argv += ["--sysroot", interpreter.root]
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return result.returncode, result.stdout.decode("utf-8", "replace")


class Report(object):
    """coreanalyze's JSON of a core, its threads by name, the ground truth's LWPs by name."""

    def __init__(self, document, truth):
        self.document = document
        self.by_name = dict((t["name"], t) for t in document["threads"] if t["name"])
        self.lwp = dict((t["name"], t["native_id"]) for t in truth["threads"].values())
        self.expect = truth.get("expect", {})

    def blocked(self, name):
        thread = self.by_name.get(name)
        return thread["blocked_on"] if thread else None

    def expect_blocked(self, name, kind, owner=None, problems=None):
        blocked = self.blocked(name)
        if blocked is None:
            problems.append("no thread named %s" % name)
            return None
        if blocked["kind"] != kind:
            problems.append("%s: blocked on %s (%s), expected kind %s"
                            % (name, blocked["kind"], blocked["description"], kind))
        if owner is not None and blocked["owner_native_thread_id"] != self.lwp[owner]:
            problems.append("%s: owner LWP %s (%s), expected %s's LWP %s"
                            % (name, blocked["owner_native_thread_id"], blocked["description"],
                               owner, self.lwp[owner]))
        return blocked


def check_deadlock(report, text, version):
    problems = []
    report.expect_blocked("worker-ab", "lock", "worker-ba", problems)
    report.expect_blocked("worker-ba", "lock", "worker-ab", problems)
    report.expect_blocked("MainThread", "join", "worker-ab", problems)
    cycles = report.document["deadlocks"]
    names = [sorted(t["name"] for t in cycle["threads"]) for cycle in cycles]
    if names != [["worker-ab", "worker-ba"]]:
        problems.append("deadlocks %r, expected one cycle of worker-ab and worker-ba" % names)
    body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    first = body.splitlines()[0] if body else ""
    if not (first.startswith("deadlock: ") and "worker-ab" in first and "worker-ba" in first):
        problems.append("the text does not open with the deadlock line: %r" % first)
    main = report.by_name.get("MainThread")
    if main and not main["state"]["main_thread"]:
        problems.append("MainThread is not marked main_thread")
    return problems


def check_rlock_event(report, text, version):
    problems = []
    blocked = report.expect_blocked("rlock-waiter", "rlock",
                                    "rlock-owner", problems)
    if blocked and version[0] >= 3 and "acquired 2 times" not in blocked["description"]:
        problems.append("rlock-waiter: %r does not say the RLock is held twice" % blocked["description"])
    report.expect_blocked("rlock-owner", "event", None, problems)
    owner = report.by_name.get("rlock-owner")
    if owner and owner["state"]["daemon"] is not True:
        problems.append("rlock-owner: daemon is %r, expected true" % owner["state"]["daemon"])
    waiter = report.by_name.get("rlock-waiter")
    if waiter and waiter["state"]["daemon"] is not False:
        problems.append("rlock-waiter: daemon is %r, expected false" % waiter["state"]["daemon"])
    if report.document["deadlocks"]:
        problems.append("deadlocks reported where there is none: %r" % report.document["deadlocks"])
    problems += check_chain(report, text, ["MainThread"], ["rlock-waiter", "rlock-owner"],
                            "which waits for Event 0x")
    return problems


def check_chain(report, text, starts, then, end_words):
    """The process's one wait chain: `starts` wait, through `then`, for the last of `then`, whose
    wait the description tells with `end_words`; its line opens the text."""
    chains = report.document.get("wait_chains", [])
    got = [([t["name"] for t in c["starts"]], [t["name"] for t in c["then"]]) for c in chains]
    if got != [(starts, then)]:
        return ["wait chains %r, expected one: %r through %r" % (got, starts, then)]
    description = chains[0]["description"]
    problems = []
    for want in ["wait chain: thread \"%s\" (LWP %d) waits for" % (starts[0], report.lwp[starts[0]])] + \
            ["thread \"%s\" (LWP %d)" % (name, report.lwp[name]) for name in then] + [end_words]:
        if want not in description:
            problems.append("wait chain %r lacks %r" % (description, want))
    body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    if not body.startswith(description):
        problems.append("the text does not open with the wait chain: %r" % body[:200])
    return problems


def check_subprocess(report, text, version):
    problems = []
    blocked = report.expect_blocked("MainThread", "child_process", None, problems)
    if blocked and blocked["child_pid"] != report.expect.get("child_pid"):
        problems.append("MainThread: child pid %s, the program started %s"
                        % (blocked["child_pid"], report.expect.get("child_pid")))
    report.expect_blocked("event-waiter", "event", None, problems)
    return problems


def check_pthread_mutex(report, text, version):
    problems = []
    blocked = report.expect_blocked("mutex-waiter", "pthread_mutex", "mutex-owner", problems)
    if blocked and blocked["object"] != "0x%x" % report.expect.get("mutex", 0):
        problems.append("mutex-waiter: mutex %s, the program's is 0x%x"
                        % (blocked["object"], report.expect.get("mutex", 0)))
    return problems


def check_gil(report, text, version, native):
    problems = []
    regex = report.by_name.get("regex")
    if regex is None or regex["state"]["gil"] != "holds":
        problems.append("regex does not hold the GIL: %r" % (regex and regex["state"]))
    # 2.7 has no take_gil and keeps its GIL lock where no symbol names it: the holder only.
    if version[0] >= 3 and (native or version >= (3, 7)):
        for spinner in ("spinner-1", "spinner-2"):
            report.expect_blocked(spinner, "gil", "regex", problems)
    if native and regex and not regex["blocked_on"]["description"].startswith("running C in "):
        problems.append("regex: %r, expected running C in (sre)" % regex["blocked_on"]["description"])
    return problems


MISC_WAITS = {"queue-get": "queue", "semaphore-acquire": "semaphore", "condition-wait": "condition",
              "sleep": "sleep", "socket-recv": "socket", "select": "select",
              "process-queue-get": "process_queue", "barrier-wait": "barrier",
              "pipe-write": "write", "QueueFeederThread": "write"}
# Threads blocked writing to a reader that does not read: they have work in hand, never "idle"
# (a queue's feeder thread is a work loop, idle only while it waits for something to send).
BUSY_WRITERS = ("pipe-write", "QueueFeederThread")


def check_misc_waits(report, text, version):
    problems = []
    for name, kind in sorted(MISC_WAITS.items()):
        if name == "barrier-wait" and version < (3, 2):
            continue
        report.expect_blocked(name, kind, None, problems)
    for name in BUSY_WRITERS:
        thread = report.by_name.get(name)
        if thread is not None and thread["state"].get("idle"):
            problems.append("%s: called idle (waiting for work) while it blocks writing (%s)"
                            % (name, thread["blocked_on"]["description"]))
        if name in text and "idle" in "".join(line for line in text.split("\n\n")
                                               if '"%s"' % name in line):
            problems.append("%s: the text calls it idle" % name)
    report.expect_blocked("MainThread", "join", "queue-get", problems)
    return problems


def check_gc(report, text, version):
    problems = []
    collector = report.by_name.get("collector")
    if collector is None:
        return ["no thread named collector"]
    # The flag is layout data from 3.7 on (2.7 and 3.6 keep it where no symbol names it).
    if version >= (3, 7):
        if not collector["state"]["in_gc"]:
            problems.append("collector: in_gc is false; state %r" % collector["state"])
        if collector["blocked_on"]["kind"] != "garbage_collection":
            problems.append("collector: blocked on %r" % collector["blocked_on"]["description"])
    main = report.by_name.get("MainThread")
    if main and main["state"]["in_gc"]:
        problems.append("MainThread (joining) said to be in garbage collection")
    return problems


def check_pool_starves(report, text, version):
    """The pool's only worker waits for a Future queued behind it: one deadlock of that thread,
    named as the program wrote (its name, its line), first in the text."""
    problems = []
    worker = report.expect.get("worker")
    cycles = report.document["deadlocks"]
    names = [[t["name"] for t in cycle["threads"]] for cycle in cycles]
    if names != [[worker]]:
        return ["deadlocks %r, expected one of the pool's worker %r" % (names, worker)]
    line = groundtruth.marker_line(os.path.join(PROGRAMS, "why_pool_starves.py"), "WAITS")
    description = cycles[0]["description"]
    for want in ("thread \"%s\" (LWP %d), the only worker of its ThreadPoolExecutor" % (worker, report.lwp[worker]),
                 "at why_pool_starves.py:%d for a Future that has not started" % line):
        if want not in description:
            problems.append("deadlock %r lacks %r" % (description, want))
    body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    if not body.startswith(description):
        problems.append("the text does not open with the deadlock line: %r" % body[:200])
    return problems


def check_self_deadlock(report, text, version):
    """A thread waits for the Lock its own outer `with` holds: one deadlock of that thread, which
    names it as the holder, first in the text."""
    problems = []
    worker = report.expect.get("worker")
    blocked = report.expect_blocked(worker, "lock", worker, problems)
    cycles = report.document["deadlocks"]
    names = [[t["name"] for t in cycle["threads"]] for cycle in cycles]
    if names != [[worker]]:
        return problems + ["deadlocks %r, expected one of %r alone" % (names, worker)]
    description = cycles[0]["description"]
    want = "thread \"%s\" (LWP %d) waits for Lock %s, which it holds itself" % (
        worker, report.lwp[worker], blocked["object"] if blocked else "?")
    if want not in description:
        problems.append("deadlock %r lacks %r" % (description, want))
    thread = report.by_name.get(worker)
    if blocked and thread and blocked["object"] not in thread["state"]["held_locks"]:
        problems.append("%s: held_locks %r lack the lock it waits for, %s"
                        % (worker, thread["state"]["held_locks"], blocked["object"]))
    body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    if not body.startswith(description):
        problems.append("the text does not open with the deadlock line: %r" % body[:200])
    return problems


# The ground truth of why_gil_holder.py is written before its regex starts: give it time to.
SETTLE_SECONDS = {"why_gil_holder.py": 0.5}

# program -> (check, coreanalyze arguments)
CASES = [
    ("deadlock.py", check_deadlock, []),
    ("why_rlock_event.py", check_rlock_event, []),
    ("why_subprocess.py", check_subprocess, []),
    ("why_pthread_mutex.py", check_pthread_mutex, ["--native"]),
    ("why_gil_holder.py", lambda r, t, v: check_gil(r, t, v, False), []),
    ("why_gil_holder.py", lambda r, t, v: check_gil(r, t, v, True), ["--native"]),
    ("why_gc.py", check_gc, []),
    ("why_misc_waits.py", check_misc_waits, []),
    ("why_pool_starves.py", check_pool_starves, []),
    ("why_self_deadlock.py", check_self_deadlock, []),
]


def run_case(coreanalyze, interpreter, program, kind, workdir):
    """Yields (label suffix, problems) for every case of `program` from one core."""
    with cores.ScenarioProcess(interpreter, program, workdir,
                               raise_core_limit=(kind == "kernel")) as process:
        truth = process.wait_for_ground_truth()
        if "skip" in truth:  # the program does not apply here: a SKIP line says why
            yield program, truth["skip"]
            return
        if program in SETTLE_SECONDS:
            time.sleep(SETTLE_SECONDS[program])
        core = process.take_core(kind)
    version = tuple(int(part) for part in truth["version"].split(".")[:2])
    try:
        for case_program, check, args in CASES:
            if case_program != program:
                continue
            code, out = run(coreanalyze, core, interpreter, ["--json"] + args)
            label = "%s %s" % (program, " ".join(args)) if args else program
            if code not in (0, 5):
                yield label, ["coreanalyze --json exited %d" % code]
                continue
            _, text = run(coreanalyze, core, interpreter, args)
            yield label, check(Report(json.loads(out), truth), text, version)
    finally:
        os.remove(core)


def main():
    args = interpreters.driver_arguments(__doc__)
    results = Results()
    programs = []
    for program, _, _ in CASES:
        if program not in programs:
            programs.append(program)
    for name, interpreter in interpreters.each_installed(args.interpreter or NAMES, results):
        # gdb's gcore loses other threads' stacks in chroots (run_scenarios.py): kernel cores there.
        kind = "kernel" if interpreter.root else "gcore"
        if kind == "kernel" and cores.kernel_core_unavailable_reason():
            results.report("SKIP", name, [cores.kernel_core_unavailable_reason()])
            continue
        for program in programs:
            workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-why-")
            try:
                for label, problems in run_case(args.coreanalyze, interpreter, program, kind, workdir):
                    if isinstance(problems, str):
                        results.report("SKIP", "%s %s" % (name, label), [problems])
                    else:
                        results.check("%s %s" % (name, label), problems)
            except (cores.CoreError, subprocess.TimeoutExpired) as error:
                results.check("%s %s" % (name, program), ["cannot take a core: %s" % error])
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
