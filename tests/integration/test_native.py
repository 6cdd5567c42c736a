#!/usr/bin/python3
"""Integration test: coreanalyze --native on real cores. For each interpreter present, take a gcore
of the deadlock scenario and check each Python thread's merged stack (--json --native-all):

- the Python frames, in the stack's order, are the thread's ground truth frames;
- no call of the eval loop is left as a native frame (each one became its Python frames);
- the innermost frame is where the registers are ("initial"), every other one says how it was
  found ("cfi" or "frame_pointer");
- a thread blocked on a lock shows, innermost first: a futex/semaphore wait in libc,
  PyThread_acquire_lock_timed, its Python frames, and its start (start_thread, clone/clone3);
- the text output shows the same stack innermost first.

Exit status: 0 passed, 1 failed, 77 no interpreter of the list is installed.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_scenarios  # noqa: E402

NAMES = ["debian-3.11", "pyenv-3.8", "pyenv-3.9", "pyenv-3.10", "pyenv-3.11", "pyenv-3.12",
         "pyenv-3.13"]
# The eval loop and the clones GCC makes of it (.lto_priv.0, .cold, .isra.0).
EVAL_LOOP = re.compile(r"^(_PyEval_EvalFrameDefault|PyEval_EvalFrameEx)(\..+)?$")
WAIT = re.compile(r"futex|sem_wait|sem_clockwait|sem_timedwait")
LOCK_WORKERS = ("worker-ab", "worker-ba")  # blocked in `with lock:` (tests/programs/deadlock.py)


def innermost_first(native_stack):
    return list(reversed(native_stack["frames"]))


def index_of(frames, predicate):
    return next((i for i, frame in enumerate(frames) if predicate(frame)), None)


def native_symbol(frame):
    return frame.get("symbol") or "" if frame["kind"] == "native" else ""


def check_thread(name, truth_thread, thread):
    stack = thread.get("native_stack")
    if stack is None:
        return ["%s: no native_stack" % name]
    if stack.get("error"):
        return ["%s: no native stack: %s" % (name, stack["error"])]
    frames = innermost_first(stack)
    problems = []
    python = [[f["file"], f["line"], f["function"]] for f in reversed(frames) if f["kind"] == "python"]
    if python != truth_thread["frames"]:
        problems.append("%s: Python frames in the native stack %r, ground truth %r"
                        % (name, python, truth_thread["frames"]))
    for frame in frames:
        if frame["kind"] == "native" and not frame["inlined"] and EVAL_LOOP.match(native_symbol(frame)):
            problems.append("%s: eval-loop frame left native: %s" % (name, frame["symbol"]))
    native = [f for f in frames if f["kind"] == "native"]
    # The innermost machine frame (and what is inlined into it) is where the registers are.
    registers = (native[0]["pc"], native[0]["sp"]) if native else None
    wrong = [(f["symbol"], f["how"]) for f in native
             if f["how"] != ("initial" if (f["pc"], f["sp"]) == registers
                             else f["how"] if f["how"] in ("cfi", "frame_pointer") else "cfi")]
    if not native or wrong:
        problems.append("%s: frames that do not say how they were found right: %r" % (name, wrong))
    if name in LOCK_WORKERS:
        problems += check_lock_wait(name, frames)
    return problems


def check_lock_wait(name, frames):
    wait = index_of(frames, lambda f: WAIT.search(native_symbol(f)))
    acquire = index_of(frames, lambda f: native_symbol(f) == "PyThread_acquire_lock_timed")
    first_python = index_of(frames, lambda f: f["kind"] == "python")
    start = index_of(frames, lambda f: native_symbol(f) == "start_thread")
    clone = index_of(frames, lambda f: re.match(r"^_*clone3?$", native_symbol(f)))
    order = [wait, acquire, first_python, start, clone]
    if None in order or order != sorted(order):
        symbols = [native_symbol(f) or "(Python) " + f.get("function", "") for f in frames]
        return ["%s: expected futex/semaphore wait < PyThread_acquire_lock_timed < Python < "
                "start_thread < clone at positions %r; stack: %s" % (name, order, symbols)]
    return []


def check_text(coreanalyze, core, report):
    text = subprocess.run([coreanalyze, core, "--native", "--no-color"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE).stdout.decode("utf-8", "replace")
    problems = []
    for thread in report["threads"]:
        frames = innermost_first(thread["native_stack"])
        lines = []
        for frame in frames:
            if frame["kind"] == "python":
                lines.append('(Python) File "%s", line %s' % (frame["file"], frame["line"]))
            elif frame.get("demangled"):
                lines.append(" in " + frame["demangled"])
        # The thread's own header line (a deadlock line above the threads names LWPs too).
        match = re.search(r"^Thread [^\n]*\(LWP %s\)" % thread["native_thread_id"], text, re.M)
        header = match.start() if match else -1
        end = text.find("\n\n", header)
        section = text[header:end] if header != -1 else ""
        positions, at = [], 0
        for line in lines:
            found = section.find(line, at)
            positions.append(found)
            at = max(at, found)
        if -1 in positions or positions != sorted(positions):
            problems.append("text output of LWP %s does not show its stack innermost first"
                            % thread["native_thread_id"])
    return problems


def check_core(coreanalyze, core, truth):
    result = subprocess.run([coreanalyze, core, "--json", "--native-all"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    if result.returncode != 0:
        return ["coreanalyze --json --native-all exited %d: %s"
                % (result.returncode, result.stderr.decode("utf-8", "replace").strip())]
    report = json.loads(result.stdout.decode("utf-8"))
    by_lwp = {t["native_thread_id"]: t for t in report["threads"]}
    problems = []
    for truth_thread in truth["threads"].values():
        thread = by_lwp.get(truth_thread["native_id"])
        if thread is None:
            problems.append("no thread with LWP %s" % truth_thread["native_id"])
            continue
        problems += check_thread(truth_thread["name"], truth_thread, thread)
    for other in report.get("threads_without_python") or []:
        if "native_stack" not in other:
            problems.append("--native-all: LWP %s has no native_stack" % other["native_thread_id"])
    return problems or check_text(coreanalyze, core, report)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    return run_scenarios.check_each_interpreter(
        NAMES, "deadlock", "hangpy-native-",
        lambda core, truth, interpreter, workdir: [("--native", check_core(args.coreanalyze, core, truth))])


if __name__ == "__main__":
    sys.exit(main())
