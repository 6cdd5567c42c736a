#!/usr/bin/python3
"""Integration test: a lock held by another thread when a process forked (issue 21), on real
processes of several interpreters (tests/programs/fork_held_lock.py writes the cause before
either process blocks: the parent's and the child's PIDs, the lock's address, the holder's name,
the child's line):

- `--pid CHILD --json`: the child's main thread waits for that lock, and the lock is held by no
  thread of the child (blocked_on.holder_gone), said in words;
- `--pid PARENT --json`: the parent's thread "cache-filler" holds that lock (state.held_locks),
  and the text says so under that thread ("Holds: lock 0x...");
- `triage --pid PARENT --pid CHILD`: the verdict's first line is the child, by PID, at its line,
  waiting for the lock that thread "cache-filler" of its parent held at fork, with the remedy;
  the parent, which only waits for its child, comes after.

- a fork after torch started libgomp's thread pool (tests/programs/fork_openmp_pool.py, Debian's
  python3 with python3-torch): the child's one thread waits for "an OpenMP (libgomp) pool whose
  threads it lost at fork", with the remedy, live and from a gcore, without
  --native (its native frames are read for the diagnosis all the same); and from the snapshot
  cores of both (`--snapshot`), which carry no binary: the native stacks the diagnosis used travel
  in the snapshot, so its diagnosis is the same.

- a fork while another thread imports a module (tests/programs/fork_import_lock.py, 3.6 on):
  `--pid CHILD --json` and a gcore of the child: its main thread waits for "the import of
  fork_import_slow", held by the thread whose ident the program wrote (the parent's "loader"),
  no thread of the child (holder_gone), at its own line; `triage --pid PARENT --pid CHILD`: the
  first line is the child waiting for that import, which thread "loader" of its parent was
  importing at fork.

Exit status: 0 passed, 1 failed, 77 no interpreter of the list is installed.
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

NAMES = ("debian-3.11", "pyenv-2.7", "pyenv-3.6", "pyenv-3.9", "pyenv-3.12", "pyenv-3.13")
PROGRAM = "fork_held_lock.py"
IMPORT_PROGRAM = "fork_import_lock.py"
IMPORT_NAMES = tuple(name for name in NAMES if name != "pyenv-2.7")
RUN_TIMEOUT = 60


def run_json(argv, problems):
    return run_scenarios.json_of(argv, problems, RUN_TIMEOUT)


def check_child(document, truth, problems):
    # Its one thread (2.7 also keeps the thread states of the threads fork left behind).
    threads = [thread for thread in document.get("threads") or []
               if (thread.get("state") or {}).get("main_thread")]
    if len(threads) != 1:
        problems.append("child: %d main threads, expected one" % len(threads))
        return
    blocked = threads[0].get("blocked_on") or {}
    if blocked.get("kind") != "lock" or blocked.get("object") != truth["lock"]:
        problems.append("child: blocked on %r, expected the lock %s" % (blocked, truth["lock"]))
    if blocked.get("holder_gone") is not True:
        problems.append("child: holder_gone is %r, expected true" % blocked.get("holder_gone"))
    if "held when the process forked" not in (blocked.get("description") or ""):
        problems.append("child: the description does not say the lock was held at fork: %r" %
                        blocked.get("description"))
    lines = [frame.get("line") for frame in threads[0].get("frames") or []]
    if truth["child_line"] not in lines:
        problems.append("child: no frame at line %d: %r" % (truth["child_line"], lines))


def check_parent(document, truth, problems):
    holders = [thread for thread in document.get("threads") or [] if thread.get("name") == truth["holder"]]
    if not holders:
        problems.append("parent: no thread named %r" % truth["holder"])
    elif truth["lock"] not in ((holders[0].get("state") or {}).get("held_locks") or []):
        problems.append("parent: %r holds %r, expected the lock %s" % (
            truth["holder"], (holders[0].get("state") or {}).get("held_locks"), truth["lock"]))


def check_triage(coreanalyze, truth, problems):
    result = subprocess.run([coreanalyze, "triage", "--pid", str(truth["parent_pid"]), "--pid",
                             str(truth["child_pid"])], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=RUN_TIMEOUT)
    text = result.stdout.decode("utf-8", "replace")
    lines = text.splitlines()
    if result.returncode != 0 or len(lines) < 2:
        problems.append("triage: exit %d: %s %s" % (result.returncode, text[-400:],
                                                    result.stderr.decode("utf-8", "replace")[-400:]))
        return
    first, second = lines[0], lines[1]
    wanted = ["PID %d" % truth["child_pid"], "fork_held_lock.py:%d" % truth["child_line"],
              "a Lock that thread \"%s\" of parent PID %d held at fork" % (truth["holder"], truth["parent_pid"]),
              "use spawn"]
    for part in wanted:
        if part not in first:
            problems.append("triage: the first line lacks %r: %s" % (part, first))
    if "PID %d" % truth["parent_pid"] not in second or "child process %d" % truth["child_pid"] not in second:
        problems.append("triage: the second line is not the parent waiting for its child: %s" % second)


def forking_program(interpreter, workdir, program):
    """`program` (a parent and its forked child, each writing its truth) started under
    `interpreter`, as a BlockedProgram: entered, it has blocked and written its truth."""
    truth_path = os.path.join(workdir, "truth.json")
    if interpreter.root:
        program_dir = cores.install_programs(os.path.join(workdir, "programs"))
    else:
        program_dir = cores.PROGRAMS
    argv = interpreter.command(interpreter.guest_path(workdir), [
        interpreter.guest_path(os.path.join(program_dir, program)), interpreter.guest_path(truth_path)])
    return BlockedProgram(argv, workdir, truth_path, also=[truth_path + ".child"],
                          env=cores.scenario_environment())


def one_interpreter(coreanalyze, interpreter, workdir):
    try:
        with forking_program(interpreter, workdir, PROGRAM) as program:
            truth = program.truth
            problems = []
            child = run_json([coreanalyze, "--pid", str(truth["child_pid"]), "--json"], problems)
            if child is not None:
                check_child(child, truth, problems)
            parent = run_json([coreanalyze, "--pid", str(truth["parent_pid"]), "--json"], problems)
            if parent is not None:
                check_parent(parent, truth, problems)
            # The text says what the holder holds, under its thread.
            text = subprocess.run([coreanalyze, "--pid", str(truth["parent_pid"])], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=RUN_TIMEOUT).stdout.decode("utf-8", "replace")
            holder_part = text.split('"%s"' % truth["holder"], 1)[-1].split("\nThread ", 1)[0]
            if "Holds: lock %s" % truth["lock"] not in holder_part:
                problems.append("parent's text: no 'Holds: lock %s' under thread %r: %s" % (
                    truth["lock"], truth["holder"], holder_part[:300]))
            check_triage(coreanalyze, truth, problems)
            return problems
    except NeverBlocked as error:
        return [str(error)]


def check_import_child(label, document, truth, problems):
    """The child's main thread waits for importlib's lock of the module the parent's thread was
    importing at fork: the module by name, the holder by the ident the program wrote."""
    threads = [thread for thread in document.get("threads") or []
               if (thread.get("state") or {}).get("main_thread")]
    if len(threads) != 1:
        problems.append("%s: %d main threads, expected one" % (label, len(threads)))
        return
    blocked = threads[0].get("blocked_on") or {}
    description = blocked.get("description") or ""
    for want in ("the import of %s (held when the process forked" % truth["module"],
                 "held when the process forked: thread %s was importing it" % truth["holder_ident"]):
        if want not in description:
            problems.append("%s: %r lacks %r" % (label, description, want))
    if blocked.get("kind") != "lock" or blocked.get("holder_gone") is not True:
        problems.append("%s: kind %r, holder_gone %r; want lock, true" % (label, blocked.get("kind"),
                                                                         blocked.get("holder_gone")))
    lines = [frame.get("line") for frame in threads[0].get("frames") or []]
    if truth["child_line"] not in lines:
        problems.append("%s: no frame at line %d: %r" % (label, truth["child_line"], lines))


def import_case(coreanalyze, interpreter, workdir):
    try:
        with forking_program(interpreter, workdir, IMPORT_PROGRAM) as program:
            truth = program.truth
            problems = []
            child = run_json([coreanalyze, "--pid", str(truth["child_pid"]), "--json"], problems)
            if child is not None:
                check_import_child("--pid", child, truth, problems)
            core = cores.gcore(truth["child_pid"], os.path.join(workdir, "child.core"))
            try:
                document = run_json([coreanalyze, core, "--json"], problems)
                if document is not None:
                    check_import_child("gcore", document, truth, problems)
            finally:
                os.remove(core)
            # With its parent, the triage names the parent's thread that was importing.
            result = subprocess.run([coreanalyze, "triage", "--pid", str(truth["parent_pid"]), "--pid",
                                     str(truth["child_pid"])], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    timeout=RUN_TIMEOUT)
            first = (result.stdout.decode("utf-8", "replace").splitlines() or [""])[0]
            want = ("waiting for the import of %s, which thread \"%s\" of parent PID %d was importing at fork"
                    % (truth["module"], truth["holder"], truth["parent_pid"]))
            if "PID %d" % truth["child_pid"] not in first or want not in first:
                problems.append("triage: the first line %r lacks the child and %r" % (first, want))
            return problems
    except NeverBlocked as error:
        return [str(error)]


TORCH_PYTHON = "/usr/bin/python3.11"  # Debian's, which python3-torch is built for (with libgomp)


def openmp_case(coreanalyze, workdir):
    """A fork after torch started libgomp's pool: the child waits in the pool, which it lost."""
    truth_path = os.path.join(workdir, "openmp.json")
    argv = [TORCH_PYTHON, os.path.join(cores.PROGRAMS, "fork_openmp_pool.py"), truth_path]
    try:
        with BlockedProgram(argv, workdir, truth_path, also=[truth_path + ".child"], timeout=120,
                            settle=1.0) as program:
            truth = program.truth
            problems = []
            core = cores.gcore(truth["child_pid"], os.path.join(workdir, "core.openmp"))
            snapshots = {"--pid": os.path.join(workdir, "live.snapshot"),
                         "gcore": os.path.join(workdir, "core.snapshot")}
            for label, target in (("--pid", ["--pid", str(truth["child_pid"])]), ("gcore", [core])):
                document = run_json([coreanalyze, "--json", "--snapshot", snapshots[label]] + target, problems)
                if document is not None:
                    check_lost_pool(label, document, truth, problems)
            for label, snapshot in snapshots.items():
                if not os.path.exists(snapshot):
                    problems.append("%s: no snapshot written" % label)
                    continue
                document = run_json([coreanalyze, "--json", snapshot], problems)
                if document is not None:
                    check_lost_pool("the snapshot of %s" % label, document, truth, problems)
            return problems
    except NeverBlocked as error:
        return [str(error)]


def check_lost_pool(label, document, truth, problems):
    threads = document.get("threads") or []
    blocked = (threads[0].get("blocked_on") or {}) if len(threads) == 1 else {}
    description = blocked.get("description") or ""
    if blocked.get("kind") != "thread_pool" or "OpenMP (libgomp)" not in description or \
            "lost at fork" not in description or "OMP_NUM_THREADS=1" not in description:
        problems.append("%s: the child's %d thread(s), blocked on %r: not libgomp's lost pool" % (
            label, len(threads), blocked))
    lines = [frame.get("line") for frame in (threads[0].get("frames") if threads else None) or []]
    if truth["line"] not in lines:
        problems.append("%s: no frame at line %d: %r" % (label, truth["line"], lines))


def torch_missing():
    if not os.access(TORCH_PYTHON, os.X_OK):
        return "%s is not installed" % TORCH_PYTHON
    if subprocess.run([TORCH_PYTHON, "-c", "import torch"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        return "%s cannot import torch (apt-get install python3-torch)" % TORCH_PYTHON
    return None


def main():
    args = interpreters.driver_arguments(__doc__)
    results = Results()
    reason = torch_missing()
    if reason:
        results.report("SKIP", "OpenMP pool lost at fork", [reason])
    else:
        workdir = run_scenarios.scenario_workdir(interpreters.resolve("debian-3.11"), "hangpy-fork-omp-")
        try:
            results.check("OpenMP pool lost at fork (torch, libgomp): the child's wait, live and gcore, "
                          "without --native", openmp_case(args.coreanalyze, workdir))
        except cores.CoreError as error:
            results.report("FAIL", "OpenMP pool lost at fork: %s" % error)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    run_scenarios.check_in_workdirs(
        args.interpreter or NAMES, results, "hangpy-fork-",
        "%s: a lock held by another thread at fork: the child's wait, the parent's holder, the triage's first line",
        lambda interpreter, workdir: one_interpreter(args.coreanalyze, interpreter, workdir))
    run_scenarios.check_in_workdirs(
        [name for name in (args.interpreter or IMPORT_NAMES) if name != "pyenv-2.7"], results,
        "hangpy-fork-import-", "%s: an import under way at fork: the child's wait, live and gcore",
        lambda interpreter, workdir: import_case(args.coreanalyze, interpreter, workdir))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
