#!/usr/bin/python3
"""Integration test: hangs of PyTorch programs (Debian's python3-torch, CPU) read from cores of
every process they leave, with `coreanalyze --json --native-all`:

- torch_allreduce_hang.py: 4 ranks on the gloo backend, rank 3 one batch short. Ranks 0-2 show
  their Python frames down to all_reduce, a c10d frame (demangled) in the main thread and gloo
  frames in the process; rank 3 its Python frames down to the lock it waits on, and gloo's
  threads; the launcher its wait for the ranks.
- torch_gomp_fork_hang.py: the child forked after libgomp's pool started is, in relu(), in a
  futex system call made by libgomp (innermost native frame in libgomp; the syscall number is read
  from the core's NT_PRSTATUS here, independently of coreanalyze).
- torch_dataloader_hang.py: each of the 2 workers waits on the lock inherited at fork: its Python
  frames end in __getitem__, and natively a futex/semaphore wait under PyThread_acquire_lock_timed.

Every process writes its own ground truth; each Python thread's frames must be exactly its
ground truth. One gcore at a time, deleted once read.

Exit status: 0 passed, 1 failed, 77 when python3-torch is not installed.
"""
import argparse
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import test_native  # noqa: E402
from results import SKIP, Results  # noqa: E402

PYTHON = "/usr/bin/python3"  # Debian's python3.11, the interpreter python3-torch is built for
TRUTH_TIMEOUT = 180.0  # the ranks each import torch and meet over TCP
REPORTER_EXIT_TIMEOUT = 10.0
SYSCALL_FUTEX = 202  # x86-64
# Native frames of a c10d/gloo collective, demangled.
C10D = re.compile(r"\bc10d::")
GLOO = re.compile(r"\bgloo::")


def torch_missing_reason():
    if not os.access(PYTHON, os.X_OK):
        return "%s not found" % PYTHON
    result = subprocess.run([PYTHON, "-c", "import torch"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    if result.returncode != 0:
        lines = result.stdout.decode("utf-8", "replace").strip().splitlines()
        return ("%s cannot import torch: %s (Debian: scripts/install-deps installs it: apt-get "
                "install python3-torch)" % (PYTHON, lines[-1] if lines else "exit %d" % result.returncode))
    return None


class ProgramRun(object):
    """A scenario program in a session of its own, so that every process it starts (ranks,
    workers, forked children) is killed with it."""

    def __init__(self, program, workdir):
        self.workdir = workdir
        self.truth_path = os.path.join(workdir, "truth.json")
        argv = [PYTHON, os.path.join(cores.PROGRAMS, program), self.truth_path]
        self.log = open(os.path.join(workdir, "output.txt"), "wb")
        self.process = subprocess.Popen(argv, cwd=workdir, env=cores.scenario_environment(),
                                        stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()
        self.log.close()

    def output(self):
        with open(os.path.join(self.workdir, "output.txt"), "rb") as log:
            return log.read().decode("utf-8", "replace").strip()[-4000:]

    def wait_for_truths(self, suffixes):
        """{suffix: ground truth} once the program wrote truth.json+suffix for each suffix ("" is
        truth.json itself) and each writing process's reporter thread has exited."""
        deadline = time.time() + TRUTH_TIMEOUT
        paths = dict((suffix, self.truth_path + suffix) for suffix in suffixes)
        while not all(os.path.exists(path) for path in paths.values()):
            if self.process.poll() is not None:
                raise cores.CoreError("program exited with %s: %s"
                                      % (self.process.returncode, self.output()))
            if time.time() > deadline:
                raise cores.CoreError("no ground truth after %d s: %s"
                                      % (TRUTH_TIMEOUT, self.output()))
            time.sleep(0.1)
        truths = {}
        for suffix, path in paths.items():
            with open(path) as truth_file:
                truths[suffix] = json.load(truth_file)
            if "skip" in truths[suffix]:
                raise cores.CoreError("program skipped: %s" % truths[suffix]["skip"])
            wait_for_reporter_exit(truths[suffix])
        return truths


def wait_for_reporter_exit(truth):
    task = "/proc/%d/task/%s" % (truth["pid"], truth.get("reporter_native_id"))
    deadline = time.time() + REPORTER_EXIT_TIMEOUT
    while os.path.exists(task):
        if time.time() > deadline:
            raise cores.CoreError("the ground-truth reporter of pid %d did not exit" % truth["pid"])
        time.sleep(0.02)


def syscall_numbers(core):
    """{LWP: the system call it was in (orig_rax)} from the core's NT_PRSTATUS notes (x86-64)."""
    numbers = {}
    with open(core, "rb") as elf:
        header = elf.read(64)
        phoff, = struct.unpack_from("<Q", header, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", header, 0x36)
        for i in range(phnum):
            elf.seek(phoff + i * phentsize)
            p_type, _, p_offset, _, _, p_filesz = struct.unpack("<IIQQQQ", elf.read(40))
            if p_type != 4:  # PT_NOTE
                continue
            elf.seek(p_offset)
            notes = elf.read(p_filesz)
            at = 0
            while at + 12 <= len(notes):
                namesz, descsz, note_type = struct.unpack_from("<III", notes, at)
                desc = at + 12 + (namesz + 3) // 4 * 4
                if note_type == 1 and descsz >= 240:  # NT_PRSTATUS: pr_pid, pr_reg.orig_rax
                    pid, = struct.unpack_from("<i", notes, desc + 32)
                    numbers[pid], = struct.unpack_from("<Q", notes, desc + 112 + 15 * 8)
                at = desc + (descsz + 3) // 4 * 4
    return numbers


def analyze(coreanalyze, core, options=("--native-all",)):
    result = subprocess.run([coreanalyze, core, "--json"] + list(options),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if result.returncode != 0:
        raise cores.CoreError("coreanalyze --json %s exited %d: %s"
                              % (" ".join(options), result.returncode,
                                 result.stderr.decode("utf-8", "replace")))
    return json.loads(result.stdout.decode("utf-8"))


def check_default_run(coreanalyze, core, report, truth):
    """The default run (no --native: native stacks unwound only for the waits its Python frames
    leave vague, a futex wait in torch's code before the locks are searched for it) must name the
    main thread's wait as --native-all does: the same kind, and for a lock the same object and
    what is known of its owner."""
    plain = main_thread(analyze(coreanalyze, core, ()), truth)
    full = main_thread(report, truth)
    if plain is None or full is None:
        return ["no main thread in the default run"]
    got, want = blocked_on(plain), blocked_on(full)
    fields = ["kind"] + (["object", "owner_unknown", "owner_native_thread_id", "holder_gone"] if want.get("kind") in ("lock", "rlock") else [])
    differ = [name for name in fields if got.get(name) != want.get(name)]
    if differ:
        return ["the default run names another wait (%s) than --native-all: %r, not %r"
                % (", ".join(differ), got, want)]
    return []


def python_frames(thread):
    frames = test_native.innermost_first(thread["native_stack"])
    return [[f["file"], f["line"], f["function"]] for f in reversed(frames) if f["kind"] == "python"]


def demangled(thread):
    stack = thread.get("native_stack") or {"frames": []}
    return [f.get("demangled") or f.get("symbol") or "" for f in stack["frames"]
            if f["kind"] == "native"]


def all_threads(report):
    return report["threads"] + (report.get("threads_without_python") or [])


def check_python_frames(report, truth):
    """Each ground-truth thread's frames, in its merged native stack, are its ground truth."""
    by_lwp = dict((t["native_thread_id"], t) for t in report["threads"])
    problems = []
    for truth_thread in truth["threads"].values():
        lwp = truth_thread["native_id"]
        if lwp not in truth["os_threads"] and truth_thread["name"] == "MainThread":
            # After fork, 3.11's threading still gives the main thread the parent's native_id.
            lwp = truth["pid"]
        thread = by_lwp.get(lwp)
        if thread is None:
            problems.append("no Python thread with LWP %s" % lwp)
        elif not thread.get("native_stack") or thread["native_stack"].get("error"):
            problems.append("LWP %s: no native stack: %s" % (
                lwp, (thread.get("native_stack") or {}).get("error")))
        elif python_frames(thread) != truth_thread["frames"]:
            problems.append("LWP %s: Python frames %r, ground truth %r" % (
                lwp, python_frames(thread), truth_thread["frames"]))
    return problems


def main_thread(report, truth):
    return next((t for t in report["threads"] if t["native_thread_id"] == truth["pid"]), None)


def check_process(coreanalyze, workdir, truth, check_more):
    """Takes a gcore of the process of `truth`, checks it, deletes it."""
    core = os.path.join(workdir, "core.%d" % truth["pid"])
    try:
        cores.gcore(truth["pid"], core)
        report = analyze(coreanalyze, core)
        return (check_python_frames(report, truth) + check_more(report, truth, core)
                + check_default_run(coreanalyze, core, report, truth))
    except cores.CoreError as error:
        return [str(error)]
    finally:
        if os.path.exists(core):
            os.unlink(core)


def blocked_on(thread):
    return (thread or {}).get("blocked_on") or {}


def check_collective_rank(report, truth, core):
    problems = []
    main = main_thread(report, truth)
    # "Blocked on" names the collective (from the Python call; c10d's wait has no op in its name).
    waits = blocked_on(main)
    if waits.get("kind") != "collective" or "all_reduce" not in waits.get("description", ""):
        problems.append("main thread not blocked on the all_reduce collective: %r" % waits)
    if main is None or not any(C10D.search(name) for name in demangled(main)):
        problems.append("no c10d:: frame in the main thread: %r" % (demangled(main) if main else None))
    if not any(GLOO.search(name) for thread in all_threads(report) for name in demangled(thread)):
        problems.append("no gloo:: frame in any thread")
    return problems


def check_short_rank(report, truth, core):
    if not any(GLOO.search(name) for thread in all_threads(report) for name in demangled(thread)):
        return ["no gloo:: frame in any thread (gloo's threads of the last rank)"]
    return []


def check_gomp_child(report, truth, core):
    main = main_thread(report, truth)
    if main is None:
        return ["no main thread"]
    native = [f for f in test_native.innermost_first(main["native_stack"]) if f["kind"] == "native"]
    problems = []
    if not native or not os.path.basename(native[0].get("module") or "").startswith("libgomp"):
        problems.append("innermost native frame not in libgomp: %r"
                        % [(f.get("module"), f.get("symbol")) for f in native[:3]])
    syscall = syscall_numbers(core).get(truth["pid"])
    if syscall != SYSCALL_FUTEX:
        problems.append("the child is in system call %s, not futex" % syscall)
    # With native frames "blocked on" names the futex and the library that waits on it.
    waits = blocked_on(main)
    if "libgomp" not in waits.get("description", ""):
        problems.append("blocked-on line does not name libgomp's futex: %r" % waits)
    return problems


def check_dataloader_worker(report, truth, core):
    main = main_thread(report, truth)
    if main is None:
        return ["no main thread"]
    frames = test_native.innermost_first(main["native_stack"])
    wait = test_native.index_of(frames, lambda f: test_native.WAIT.search(test_native.native_symbol(f)))
    acquire = test_native.index_of(
        frames, lambda f: test_native.native_symbol(f) == "PyThread_acquire_lock_timed")
    getitem = test_native.index_of(
        frames, lambda f: f["kind"] == "python" and f["function"] == "__getitem__")
    problems = []
    if None in (wait, acquire, getitem) or not wait < acquire < getitem:
        problems.append("expected futex/semaphore wait < PyThread_acquire_lock_timed < "
                        "__getitem__, at positions %r" % [wait, acquire, getitem])
    if syscall_numbers(core).get(truth["pid"]) != SYSCALL_FUTEX:
        problems.append("the worker is not in a futex system call")
    # The lock was taken with acquire() before the fork: memory cannot say who holds it.
    waits = blocked_on(main)
    if waits.get("kind") != "lock" or not waits.get("owner_unknown"):
        problems.append("worker not blocked on a Lock with its owner unknown: %r" % waits)
    return problems


def no_more_checks(report, truth, core):
    return []


def run_scenario(coreanalyze, results, label, program, cases):
    """cases: [(suffix, case label, check)]: the ground truth truth.json+suffix names the
    process; each is cored and checked in turn."""
    workdir = tempfile.mkdtemp(prefix="hangpy-torch-", dir="/var/tmp")
    started = time.time()
    try:
        with ProgramRun(program, workdir) as run:
            try:
                truths = run.wait_for_truths([suffix for suffix, _, _ in cases])
            except cores.CoreError as error:
                results.check("%s: ground truth" % label, [str(error)])
                return
            for suffix, case, check in cases:
                results.check("%s: %s" % (label, case),
                              check_process(coreanalyze, workdir, truths[suffix], check))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        print("     (%s: %.0f s)" % (label, time.time() - started))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    reason = torch_missing_reason()
    if reason:
        results.report("SKIP", "torch", [reason])
        results.finish()
        return SKIP
    run_scenario(args.coreanalyze, results, "gloo all_reduce, 4 ranks", "torch_allreduce_hang.py",
                 [(".rank%d" % rank, "rank %d blocked in all_reduce" % rank, check_collective_rank)
                  for rank in range(3)]
                 + [(".rank3", "rank 3 (one batch short) waiting on a lock", check_short_rank),
                    ("", "the launcher waiting for its ranks", no_more_checks)])
    run_scenario(args.coreanalyze, results, "libgomp after fork", "torch_gomp_fork_hang.py",
                 [("", "the forked child in relu()", check_gomp_child)])
    run_scenario(args.coreanalyze, results, "DataLoader, 2 workers", "torch_dataloader_hang.py",
                 [(".worker%d" % worker, "worker %d on the lock inherited at fork" % worker,
                   check_dataloader_worker) for worker in range(2)]
                 + [("", "the main process waiting for a batch", no_more_checks)])
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
