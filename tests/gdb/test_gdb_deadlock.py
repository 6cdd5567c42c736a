#!/usr/bin/python3
"""gdb test: py-deadlock and the state/"blocked on" lines of py-threads, in gdb attached to the
live process and in gdb on a core of it, against what the programs wrote about themselves:

- deadlock.py: py-deadlock prints the one cycle (worker-ab and worker-ba, each with its LWP);
  py-threads shows each worker blocked on a Lock held by the other, the main thread joining;
- why_pthread_mutex.py: py-threads shows mutex-waiter blocked on the pthread mutex (the address
  the program wrote) held by mutex-owner, from gdb's frames (pthread_mutex_lock) and registers.

  test_gdb_deadlock.py --hangpy-init build/gdbplugin/hangpy.gdb [--interpreter NAME ...]

Exit status: 0 passed, 1 failed, 77 gdb, the module or every interpreter is missing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import gdb_session  # noqa: E402
import interpreters  # noqa: E402
from results import SKIP, Results  # noqa: E402

NAMES = ["debian-3.11", "pyenv-2.7", "pyenv-3.8", "pyenv-3.12", "pyenv-3.13"]
COMMANDS = [("deadlock", "py-deadlock"), ("threads", "py-threads")]


def thread_block(lines, name):
    """py-threads' lines of the thread named `name`: its header and the indented lines below."""
    for i, line in enumerate(lines):
        if re.match(r'^[* ] gdb thread \S+: .*"%s"' % re.escape(name), line):
            block = [line]
            for following in lines[i + 1:]:
                if not following.startswith("    "):
                    break
                block.append(following)
            return block
    return []


def blocked_on(lines, name):
    for line in thread_block(lines, name):
        if line.strip().startswith("Blocked on: "):
            return line.strip()[len("Blocked on: "):]
    return None


def expect_blocked(lines, name, pattern, problems):
    text = blocked_on(lines, name)
    if text is None or not re.search(pattern, text):
        problems.append("py-threads: %s is blocked on %r, expected to match %r" % (name, text, pattern))


def check_deadlock(result, truth):
    lwp = dict((t["name"], t["native_id"]) for t in truth["threads"].values())
    problems = []
    lines = result.output("deadlock")
    wanted = [line for line in lines if line.startswith("deadlock: ")]
    if len(wanted) != 1 or not all('"%s" (LWP %d)' % (n, lwp[n]) in wanted[0]
                                   for n in ("worker-ab", "worker-ba")):
        problems.append("py-deadlock printed %r, expected one line naming worker-ab (LWP %d) and "
                        "worker-ba (LWP %d)" % (lines, lwp["worker-ab"], lwp["worker-ba"]))
    threads = result.output("threads")
    expect_blocked(threads, "worker-ab", r'^Lock 0x[0-9a-f]+ held by thread "worker-ba" \(LWP %d\)$'
                   % lwp["worker-ba"], problems)
    expect_blocked(threads, "worker-ba", r'^Lock 0x[0-9a-f]+ held by thread "worker-ab" \(LWP %d\)$'
                   % lwp["worker-ab"], problems)
    expect_blocked(threads, "MainThread", r'^Thread.join of thread "worker-ab"', problems)
    if not any(line.startswith("deadlock: ") for line in threads):
        problems.append("py-threads does not list the deadlock first")
    return problems


def check_pthread_mutex(result, truth):
    lwp = dict((t["name"], t["native_id"]) for t in truth["threads"].values())
    problems = []
    expect_blocked(result.output("threads"), "mutex-waiter",
                   r'^pthread mutex 0x%x held by thread "mutex-owner" \(LWP %d\)$'
                   % (truth["expect"]["mutex"], lwp["mutex-owner"]), problems)
    lines = result.output("deadlock")
    if not any(line.startswith("No deadlock among") for line in lines):
        problems.append("py-deadlock printed %r, expected no deadlock" % lines)
    # Where the waits end instead: the waiter's chain, to the mutex's owner.
    chain = 'thread "mutex-waiter" (LWP %d), which waits for pthread mutex 0x%x held by thread ' \
            '"mutex-owner" (LWP %d)' % (lwp["mutex-waiter"], truth["expect"]["mutex"], lwp["mutex-owner"])
    if not any(line.startswith("wait chain: ") and chain in line for line in lines):
        problems.append("py-deadlock printed %r, expected a wait chain with %r" % (lines, chain))
    return problems


CASES = [("deadlock.py", check_deadlock), ("why_pthread_mutex.py", check_pthread_mutex)]


def run_case(options, interpreter, program, check, mode):
    workdir = tempfile.mkdtemp(prefix="hangpy-gdb-why-")
    try:
        with cores.ScenarioProcess(interpreter, program, workdir) as process:
            truth = process.wait_for_ground_truth()
            if "skip" in truth:
                return "SKIP", [truth["skip"]]
            if mode == "live":
                target = gdb_session.target_args_live(process.pid)
            else:
                core = process.take_core("gcore")
                process.kill()
                target = gdb_session.target_args_core(interpreter.executable, core)
            result = gdb_session.run_gdb(options, target, COMMANDS)
        try:
            problems = check(result, truth)
        except KeyError as missing:
            problems = ["gdb printed no output for %s: %s" % (missing, result.text[-2000:])]
        for line in result.text.splitlines():
            if "Python Exception" in line or "internal error" in line:
                problems.append("gdb printed: %s" % line)
        return ("FAIL" if problems else "PASS"), problems
    except (cores.CoreError, subprocess.TimeoutExpired) as error:
        return "FAIL", [str(error)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hangpy-init", required=True)
    parser.add_argument("--interpreter", action="append", choices=interpreters.names("gdb"))
    args = parser.parse_args()
    problem = gdb_session.environment_problem(args.hangpy_init)
    if problem:
        print("SKIP: " + problem)
        return SKIP
    results = Results()
    for name in args.interpreter or NAMES:
        interpreter, options, skip = gdb_session.setup(name, args.hangpy_init)
        if skip:
            results.report("SKIP", name, [skip])
            continue
        for program, check in CASES:
            for mode in ("core", "live"):
                status, details = run_case(options, interpreter, program, check, mode)
                results.report(status, "%s %s (%s)" % (name, program, mode), details)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
