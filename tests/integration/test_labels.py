#!/usr/bin/python3
"""Process labels (host, PID, ppid, rank labels, role) in --json and the text header, read from
real processes of the interpreters present:

- tests/programs/labels_tree.py `plain`, started with RANK=3 WORLD_SIZE=8 LOCAL_RANK=1
  SLURM_PROCID=3 HOSTNAME=node-from-env and a secret variable: its kernel core, its gcore and
  --pid each give those labels (the environment from the initial stack in a core,
  /proc/PID/environ live), role "training rank", its parent; the secret's name and value appear
  nowhere in the output, text or JSON;
- the same core in an ABRT directory and an apport report: the core's own environment wins over
  the wrapper's; a snapshot of the core holds none of the environment's pages but a note of the
  rank labels (never the secret), which wins over the wrapper's too; a snapshot without that note
  takes them from the ABRT `environ` and `hostname` items, or apport's ProcEnviron;
- `tree` (3.8 on): the main process (training rank), a 'spawn' child and a 'fork' child (child),
  multiprocessing's resource_tracker (resource_tracker), each with its parent, by --pid and, for
  the resource_tracker, by gcore (its command line cut at 80 bytes in the core: its stack tells);
- `dataloader` under Debian's python3.11 with python3-torch: the DataLoader workers (DataLoader
  worker) and their training rank.

Exit status: 0 passed, 1 failed, 77 when no interpreter of the list is installed.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
import test_inputs  # noqa: E402
from results import Results  # noqa: E402

PROGRAM = os.path.join(cores.PROGRAMS, "labels_tree.py")
ENVIRONMENT_INTERPRETERS = ("debian-3.11", "pyenv-2.7", "pyenv-3.6", "pyenv-3.12", "pyenv-3.13")
TREE_INTERPRETERS = ("debian-3.11", "pyenv-3.12")
TORCH_PYTHON = "/usr/bin/python3.11"
READY_TIMEOUT = 120.0
RUN_TIMEOUT = 120
SECRET_NAME = "HANGPY_TEST_API_TOKEN"
LABELS = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "SLURM_PROCID": "3",
          "HOSTNAME": "node-from-env"}
# GROUP_RANK is set by the program in os.environ at run time: the labels are the program's now.
EXPECTED_LABELS = {"rank": 3, "world_size": 8, "local_rank": 1, "slurm_procid": 3,
                   "local_world_size": None, "group_rank": 2, "slurm_localid": None,
                   "spawn_index": None, "spawn_nprocs": None, "dataloader_worker_id": None,
                   "slurm_nodeid": None, "slurm_job_id": None}
TEXT_LINE = "Role: training rank (rank 3 of 8, local rank 1, SLURM_PROCID 3), host %s"


class Tree(object):
    """labels_tree.py in one mode, killed with its whole process group on exit."""

    def __init__(self, executable, mode, workdir, env, raise_core_limit=False):
        self.ready_path = os.path.join(workdir, "ready.json")
        if os.path.exists(self.ready_path):  # an earlier run's
            os.remove(self.ready_path)
        preexec = (lambda: (os.setpgrp(), cores._unlimited_core())) if raise_core_limit else os.setpgrp
        self.process = subprocess.Popen([executable, PROGRAM, mode, self.ready_path], cwd=workdir,
                                        env=env, preexec_fn=preexec, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.pid = self.process.pid

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()
        self.process.stdout.close()

    def roles(self):
        """{pid: what the program says it is} once every process started."""
        deadline = time.time() + READY_TIMEOUT
        while not os.path.exists(self.ready_path):
            if self.process.poll() is not None:
                raise cores.CoreError("exited with %s: %s" % (
                    self.process.returncode,
                    self.process.stdout.read().decode("utf-8", "replace")[-800:]))
            if time.time() > deadline:
                raise cores.CoreError("not ready after %d s" % READY_TIMEOUT)
            time.sleep(0.05)
        with open(self.ready_path) as stream:
            return dict((int(pid), role) for pid, role in json.load(stream).items())


def environment(extra):
    env = cores.scenario_environment()
    for name in list(env):
        if name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "SLURM_PROCID", "SLURMD_NODENAME", "HOSTNAME",
                    "OMPI_COMM_WORLD_RANK", "PMI_RANK") or name.startswith("SLURM_"):
            del env[name]
    env.update(extra)
    return env


def run(argv):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT)
    return (result.returncode, result.stdout.decode("utf-8", "replace"),
            result.stderr.decode("utf-8", "replace"))


def process_of(coreanalyze, target, problems):
    """The "process" object of --json for `target` (a core path or ["--pid", PID]), with the
    text output's header, or None (problems say why)."""
    arguments = target if isinstance(target, list) else [target]
    code, out, err = run([coreanalyze, "--json"] + arguments)
    text_code, text, text_err = run([coreanalyze] + arguments)
    everything = out + err + text + text_err
    if SECRET_NAME in everything or secret_value() in everything:
        problems.append("the secret variable appears in the output")
    if code not in (0, 5) or text_code not in (0, 5):
        problems.append("exit %d / %d: %s %s" % (code, text_code, err.strip()[-400:], text_err.strip()[-400:]))
        return None, None
    document = json.loads(out)
    return document["process"], text


_SECRET = "s3cret-%d-%d" % (os.getpid(), int(time.time()))


def secret_value():
    return _SECRET


def check_labels(process, text, expected_source, host, parent, problems):
    if process is None:
        return
    for name in ("pid", "ppid", "host", "command", "role", "labels", "environment"):
        if name not in process:
            problems.append("no %r in process" % name)
    if process.get("labels") != EXPECTED_LABELS:
        problems.append("labels %r, want %r" % (process.get("labels"), EXPECTED_LABELS))
    if process.get("role") != "training rank":
        problems.append("role %r" % process.get("role"))
    if process.get("ppid") != parent or process.get("parent_pid") != parent:
        problems.append("ppid %r / parent_pid %r, want %d" % (process.get("ppid"), process.get("parent_pid"), parent))
    if process.get("host") != host:
        problems.append("host %r, want %r" % (process.get("host"), host))
    # The run-time GROUP_RANK comes from os.environ; a snapshot's note holds it already.
    if expected_source != "snapshot note":
        expected_source += ", os.environ"
    if process.get("environment_source") != expected_source:
        problems.append("environment_source %r, want %r" % (process.get("environment_source"), expected_source))
    if process.get("environment") != dict(LABELS, GROUP_RANK="2"):
        problems.append("environment %r, want %r" % (process.get("environment"), dict(LABELS, GROUP_RANK="2")))
    line = TEXT_LINE % host
    if line not in text.splitlines():
        problems.append("no text line %r in: %r" % (line, text.splitlines()[:4]))


def check_environment(coreanalyze, label, interpreter, results):
    workdir = tempfile.mkdtemp(prefix="hangpy-labels-")
    try:
        env = environment(dict(LABELS, **{SECRET_NAME: secret_value()}))
        kinds = [kind for kind in cores.CORE_KINDS
                 if kind != "kernel" or not cores.kernel_core_unavailable_reason()]
        for kind in kinds:
            with Tree(interpreter.executable, "plain", workdir, env, kind == "kernel") as tree:
                tree.roles()
                problems = []
                if kind == "gcore":
                    process, text = process_of(coreanalyze, ["--pid", str(tree.pid)], problems)
                    check_labels(process, text, "/proc/%d/environ" % tree.pid, socket.gethostname(),
                                 os.getpid(), problems)
                    results.check("%s: --pid" % label, problems)
                    problems = []
                if kind == "gcore":
                    core = cores.gcore(tree.pid, os.path.join(workdir, "core.%d" % tree.pid))
                else:
                    core = cores.kernel_core(tree.process, workdir, interpreter)
            process, text = process_of(coreanalyze, core, problems)
            check_labels(process, text, "initial stack", "node-from-env", os.getpid(), problems)
            results.check("%s: %s core" % (label, kind), problems)
            if kind == "kernel" or len(kinds) == 1:
                check_wrappers(coreanalyze, label, core, tree.pid, workdir, results)
            os.remove(core)
    except cores.CoreError as error:
        results.report("FAIL", "%s: %s" % (label, error))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# symbols/snapshot_note.h: the note "HANGPY" of type 0x48505902 holds a snapshot's rank labels.
LABELS_NOTE = (0x48505902).to_bytes(4, "little") + b"HANGPY\0"
UNKNOWN_NOTE = (0x485059FF).to_bytes(4, "little") + b"HANGPY\0"


def without_labels_note(snapshot, path):
    """A copy of `snapshot` whose labels note has a type no reader knows (as an older snapshot,
    which had none)."""
    with open(snapshot, "rb") as stream:
        data = stream.read()
    if data.count(LABELS_NOTE) != 1:
        raise cores.CoreError("%s: %d labels notes" % (snapshot, data.count(LABELS_NOTE)))
    with open(path, "wb") as stream:
        stream.write(data.replace(LABELS_NOTE, UNKNOWN_NOTE))
    return path


def check_wrappers(coreanalyze, label, core, pid, workdir, results):
    """ABRT and apport: the core's environment first, the wrapper's where the core has none."""
    w = lambda name: os.path.join(workdir, name)  # noqa: E731
    proc = {"pid": pid, "executable": "/nonexistent", "cmdline": b"python labels_tree.py",
            "maps": b"", "environ": b"RANK=5\0WORLD_SIZE=8\0" + SECRET_NAME.encode() + b"=" +
            secret_value().encode() + b"\0"}
    abrt = test_inputs.make_abrt_directory(core, proc, w("ccpp-full"))
    problems = []
    process, text = process_of(coreanalyze, abrt, problems)
    if process is not None and (process["labels"]["rank"] != 3 or
                                process["environment_source"] != "initial stack, os.environ"):
        problems.append("want the core's own rank 3 from its initial stack, got %r from %r"
                        % (process["labels"]["rank"], process["environment_source"]))
    results.check("%s: ABRT directory: the core's environment first" % label, problems)

    snapshot = w("snapshot.core")
    code, _, err = run([coreanalyze, core, "--snapshot", snapshot])
    if code not in (0, 5):
        results.report("FAIL", "%s: snapshot" % label, [err.strip()[-400:]])
        return
    problems = []
    process, text = process_of(coreanalyze, snapshot, problems)
    check_labels(process, text, "snapshot note", "node-from-env", process and process.get("ppid"), problems)
    # Its saved pages may include the initial stack's strings (they can share a page with the
    # main thread's first C frames): they are written as zeros, so no byte of the rest is kept.
    with open(snapshot, "rb") as stream:
        data = stream.read()
    for leaked in (secret_value(), SECRET_NAME):
        if leaked.encode() in data:
            problems.append("the snapshot file holds %r" % leaked)
    results.check("%s: snapshot core holds the rank labels only (its own note)" % label, problems)

    # The core's own labels win over a wrapper's, a snapshot's note as a core's initial stack.
    abrt = test_inputs.make_abrt_directory(snapshot, proc, w("ccpp-snapshot-labelled"))
    problems = []
    process, _ = process_of(coreanalyze, abrt, problems)
    if process is not None and (process["labels"]["rank"], process["environment_source"]) != (3, "snapshot note"):
        problems.append("want the snapshot's own rank 3 from its note, got %r from %r"
                        % (process["labels"]["rank"], process["environment_source"]))
    results.check("%s: ABRT directory of a snapshot: the snapshot's labels first" % label, problems)

    # A snapshot without the note (of an older hangpy): no environment of its own, the wrapper's.
    snapshot = without_labels_note(snapshot, w("snapshot-without-labels.core"))
    problems = []
    process, _ = process_of(coreanalyze, snapshot, problems)
    if process is not None and (process["environment"] or process["environment_source"] is not None
                                or process["labels"]["rank"] is not None):
        problems.append("a snapshot without its note holds an environment: %r from %r"
                        % (process["environment"], process["environment_source"]))
    results.check("%s: snapshot core without the labels note holds no environment" % label, problems)

    abrt = test_inputs.make_abrt_directory(snapshot, proc, w("ccpp-snapshot"))
    with open(os.path.join(abrt, "hostname"), "w") as stream:
        stream.write("abrt-host\n")
    problems = []
    process, text = process_of(coreanalyze, abrt, problems)
    if process is not None:
        want = {"rank": 5, "world_size": 8, "source": "ABRT environ", "host": "abrt-host"}
        got = {"rank": process["labels"]["rank"], "world_size": process["labels"]["world_size"],
               "source": process["environment_source"], "host": process["host"]}
        if got != want:
            problems.append("got %r, want %r" % (got, want))
        if "Role: training rank (rank 5 of 8), host abrt-host" not in text:
            problems.append("text header: %r" % text.splitlines()[:3])
    results.check("%s: ABRT directory of a snapshot: environ and hostname items" % label, problems)

    report = test_inputs.write_apport_report(
        snapshot, dict(proc, maps=b""), w("snapshot.crash"),
        proc_environ="LANG=C.UTF-8\nRANK=6\nWORLD_SIZE=8\n%s=%s" % (SECRET_NAME, secret_value()))
    problems = []
    process, text = process_of(coreanalyze, report, problems)
    if process is not None:
        got = (process["labels"]["rank"], process["environment_source"], process["environment"])
        want = (6, "apport ProcEnviron", {"RANK": "6", "WORLD_SIZE": "8"})
        if got != want:
            problems.append("got %r, want %r" % (got, want))
    results.check("%s: apport report of a snapshot: ProcEnviron" % label, problems)


def check_roles(coreanalyze, label, executable, mode, env, results, gcore_role=None):
    workdir = tempfile.mkdtemp(prefix="hangpy-labels-")
    try:
        with Tree(executable, mode, workdir, env) as tree:
            roles = tree.roles()
            want_role = {"main": "training rank", "spawn child": "child", "fork child": "child",
                         "resource_tracker": "resource_tracker",
                         "DataLoader worker": "DataLoader worker"}
            for pid, what in sorted(roles.items()):
                problems = []
                process, text = process_of(coreanalyze, ["--pid", str(pid)], problems)
                if process is not None:
                    want_parent = os.getpid() if what == "main" else tree.pid
                    got = (process["role"], process["ppid"], process["labels"]["rank"])
                    if got != (want_role[what], want_parent, 0):
                        problems.append("role, ppid, rank %r, want %r" % (got, (want_role[what], want_parent, 0)))
                    header = "Role: %s (rank 0 of 2)" % want_role[what]
                    if what == "DataLoader worker":
                        # The worker's id, as the worker wrote it (its rank is its parent's).
                        with open(os.path.join(workdir, "worker.%s" % pid)) as stream:
                            worker_id = int(stream.read())
                        if process["labels"]["dataloader_worker_id"] != worker_id:
                            problems.append("dataloader_worker_id %r, want %d" % (
                                process["labels"]["dataloader_worker_id"], worker_id))
                        header = "Role: %s (rank 0 of 2, DataLoader worker %d)" % (want_role[what], worker_id)
                    if header not in text:
                        problems.append("text header: %r, want %r" % (text.splitlines()[:3], header))
                results.check("%s: %s %d (--pid)" % (label, what, pid), problems)
                if what == gcore_role:
                    problems = []
                    core = cores.gcore(pid, os.path.join(workdir, "core.%d" % pid))
                    process, _ = process_of(coreanalyze, core, problems)
                    if process is not None and process["role"] != want_role[what]:
                        problems.append("role %r from the core (command line %r)"
                                        % (process["role"], process.get("arguments")))
                    os.remove(core)
                    results.check("%s: %s %d (gcore)" % (label, what, pid), problems)
            if mode == "tree" and "resource_tracker" not in roles.values():
                results.report("FAIL", "%s: no resource_tracker started" % label)
    except cores.CoreError as error:
        results.report("FAIL", "%s: %s: %s" % (label, mode, error))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def torch_missing():
    if not os.access(TORCH_PYTHON, os.X_OK):
        return "%s is not installed" % TORCH_PYTHON
    result = subprocess.run([TORCH_PYTHON, "-c", "import torch"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    if result.returncode != 0:
        return "%s cannot import torch (apt-get install python3-torch)" % TORCH_PYTHON
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--only", choices=("environment", "tree", "torch"), action="append")
    args = parser.parse_args()
    results = Results()
    only = set(args.only or ("environment", "tree", "torch"))
    if "environment" in only:
        for name, interpreter in interpreters.each_installed(ENVIRONMENT_INTERPRETERS, results):
            check_environment(args.coreanalyze, name, interpreter, results)
    rank_env = environment({"RANK": "0", "WORLD_SIZE": "2"})
    if "tree" in only:
        for name, interpreter in interpreters.each_installed(TREE_INTERPRETERS, results):
            check_roles(args.coreanalyze, name, interpreter.executable, "tree", rank_env, results,
                        gcore_role="resource_tracker")
    if "torch" in only:
        reason = torch_missing()
        if reason:
            results.report("SKIP", "DataLoader workers", [reason])
        else:
            check_roles(args.coreanalyze, "torch", TORCH_PYTHON, "dataloader", rank_env, results,
                        gcore_role="DataLoader worker")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
