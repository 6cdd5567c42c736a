#!/usr/bin/python3
"""A live read changes nothing the process does: tests/programs/blocked_calls.py, under each
interpreter present, blocks threads in pipe and socket writes (1,000,000 bytes, drained later),
pipe and socket reads, sleep, select, poll and epoll with timeouts and a lock wait with a
timeout, and keeps one thread running Python. It runs twice: once alone, once read by
`coreanalyze --pid --json`, `coreanalyze --pid --native --locals` and `coreanalyze triage --pid`
while its threads block. Both runs must give every call the same outcome (bytes written and
delivered, values returned, no error) in the same time (within TIME_SLACK seconds), and the read
must show each blocked thread in its call (its innermost function as the program's
sys._current_frames() names it) with its LWP (Thread.native_id, 3.8 on; before 3.11 found
through the thread pointer), having stopped the running thread and left the others alone.

Exit status: 0 passed, 1 failed, 77 when no interpreter is installed.
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

NAMES = ("debian-3.11", "pyenv-3.6", "pyenv-3.8", "pyenv-3.9", "pyenv-3.10", "pyenv-3.12",
         "pyenv-3.13", "bullseye-3.9", "trixie-3.13", "sid-3.14", "sid-3.15")
PROGRAM = "blocked_calls.py"
DELAY = 4.0        # how long each call blocks; the reads happen in the first half
TIME_SLACK = 0.5   # seconds a call may take more or less than in the run without a read
RUN_TIMEOUT = 60
BLOCKED = ("pipe-write", "buffered-write", "socket-send", "pipe-read", "socket-recv", "sleep",
           "select", "poll", "epoll", "lock")


def run(argv):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT)
    return (result.returncode, result.stdout.decode("utf-8", "replace"),
            result.stderr.decode("utf-8", "replace"))


def one_run(interpreter, workdir, label, read):
    """Runs the program once; `read(pid, ready)` is called once its threads block. Returns
    (outcomes, problems)."""
    ready = os.path.join(workdir, "ready-%s.json" % label)
    result = os.path.join(workdir, "result-%s.json" % label)
    if interpreter.root:
        program_dir = cores.install_programs(os.path.join(workdir, "programs"))
    else:
        program_dir = cores.PROGRAMS
    argv = interpreter.command(interpreter.guest_path(workdir), [
        interpreter.guest_path(os.path.join(program_dir, PROGRAM)), interpreter.guest_path(ready),
        interpreter.guest_path(result), str(DELAY)])
    process = subprocess.Popen(argv, cwd=workdir, env=cores.scenario_environment(),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    problems = []
    try:
        deadline = time.time() + 30
        while not os.path.exists(ready) and process.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        if not os.path.exists(ready):
            process.kill()
            return None, ["%s run: the program never blocked: %s" % (
                label, process.communicate()[0].decode("utf-8", "replace")[-600:])]
        with open(ready) as stream:
            truth = json.load(stream)
        if read:
            problems += read(process.pid, truth)
        output = process.communicate(timeout=DELAY * 4 + 30)[0].decode("utf-8", "replace")
        if process.returncode != 0 or not os.path.exists(result):
            return None, problems + ["%s run: exit %s: %s" % (label, process.returncode, output[-600:])]
        with open(result) as stream:
            return json.load(stream), problems
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def check_document(document, truth, problems):
    """The threads of a --json read: each blocked one in its call; the running one stopped."""
    by_name = dict((thread.get("name"), thread) for thread in document.get("threads", []))
    for name in BLOCKED:
        frames = (by_name.get(name) or {}).get("frames") or []
        innermost = frames[-1].get("function", "").split(".")[-1] if frames else None
        if innermost != truth["innermost"].get(name):
            problems.append("thread %s: innermost frame %r, want %r" % (
                name, innermost, truth["innermost"].get(name)))
        native_id = truth["native_ids"].get(name)
        if native_id is not None and (by_name.get(name) or {}).get("native_thread_id") != native_id:
            problems.append("thread %s: LWP %r, want %r" % (
                name, (by_name.get(name) or {}).get("native_thread_id"), native_id))
    # What each blocked descriptor is, from /proc (issue 21): the pipes, the socket pairs.
    for name, kind in (("pipe-write", "pipe:["), ("pipe-read", "pipe:["), ("socket-send", "unix socket"),
                       ("socket-recv", "unix socket")):
        description = ((by_name.get(name) or {}).get("blocked_on") or {}).get("description") or ""
        if " is %s" % kind not in description:
            problems.append("thread %s: blocked on %r, which does not say its descriptor is a %s" % (
                name, description, kind))
    live = document.get("live") or {}
    if live.get("stopped_threads", 0) < 1:
        problems.append("the thread running Python was not stopped: %r" % live)
    if live.get("threads_in_syscall", 0) < len(BLOCKED):
        problems.append("fewer than %d threads read in their system calls: %r" % (len(BLOCKED), live))


def reads(coreanalyze):
    def read(pid, truth):
        problems = []
        code, out, err = run([coreanalyze, "--pid", str(pid), "--json"])
        if code not in (0, 5):
            problems.append("--pid --json: exit %d: %s" % (code, err.strip()[-400:]))
        else:
            check_document(json.loads(out), truth, problems)
        for argv in ([coreanalyze, "--pid", str(pid), "--native", "--locals"],
                     [coreanalyze, "triage", "--pid", str(pid)]):
            code, out, err = run(argv)
            if code not in (0, 5):
                problems.append("%s: exit %d: %s" % (" ".join(argv[1:]), code, err.strip()[-400:]))
        return problems
    return read


def compare(alone, read, problems):
    for name in sorted(set(alone) | set(read)):
        if name == "received":
            if alone[name] != read.get(name):
                problems.append("bytes delivered: %r read, %r alone" % (read.get(name), alone[name]))
            continue
        mine, theirs = read.get(name, {}), alone.get(name, {})
        if mine.get("value") != theirs.get("value") or mine.get("error") != theirs.get("error"):
            problems.append("%s: %r read, %r alone" % (name, mine, theirs))
        elif name != "spin" and abs(mine.get("seconds", 0) - theirs.get("seconds", 0)) > TIME_SLACK:
            problems.append("%s: took %.3f s read, %.3f s alone" % (name, mine["seconds"], theirs["seconds"]))


def main():
    args = interpreters.driver_arguments(__doc__)
    results = Results()
    for name, interpreter in interpreters.each_installed(args.interpreter or NAMES, results):
        workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-harmless-")
        try:
            alone, problems = one_run(interpreter, workdir, "alone", None)
            if alone is not None:
                read, read_problems = one_run(interpreter, workdir, "read", reads(args.coreanalyze))
                problems += read_problems
                if read is not None:
                    compare(alone, read, problems)
            results.check("%s: blocked writes, reads, sleeps, selects, polls and a lock wait "
                          "read live give what they give unread" % name, problems)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
