#!/usr/bin/python3
"""Integration test: coreanalyze collect on a hung job's process tree (tests/programs/
collect_job.py: a launcher, 3 ranks, a multiprocessing "spawn" worker and its resource_tracker, a
child that runs no Python, a zombie), on this machine and through pdsh's exec module.

- --pid LAUNCHER: a JSON file per Python process (DIR/NODE/PID.json), each holding the function
  that process told us it blocks in; the sleep child and the zombie are in the manifest as
  skipped and have no JSON; the ranks' RANK/LOCAL_RANK/WORLD_SIZE are in the manifest; no process
  is left stopped;
- --name collect_job.py: the same processes (the descendants too, whose command lines do not hold
  the name), never the collector or what started it;
- --cores snapshot: a snapshot core per process, small, whose own analysis shows the same
  function; --cores full into a 16 MB file system: refused before gcore runs, saying how much
  space it needs and has (needs root and unshare for the private tmpfs; in a chroot, where "/" is
  no mount point, the directory is bind-mounted on itself and made private first; skipped, with
  each way's own error, where no tmpfs can be mounted);
- the collector run as another user without privileges (a copy of coreanalyze in a directory
  every user may reach, the clone may be closed to them): exit code 10 and a line saying what to
  do;
- no triage subcommand in this coreanalyze: the collector says where the results are (with one,
  it runs it);
- a real torchrun (python3-torch, gloo, 2 ranks; its rendezvous at 127.0.0.1, no name to
  resolve): the agent and both ranks taken, rank 0 in all_reduce, rank 1 where it waits, their
  RANK/LOCAL_RANK/WORLD_SIZE in the manifest; when it fails, its own output says why;
- pdsh -R exec -w localhost,127.0.0.1: both "hosts" write their own directory, each with every
  Python process's JSON, and the top manifest lists both.

Exit status: 0 passed, 1 failed, 77 no interpreter of the list is installed.
"""
import argparse
import glob
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
import interpreters  # noqa: E402
from results import Results  # noqa: E402

PROGRAMS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "programs")
JOB = os.path.join(PROGRAMS, "collect_job.py")
# One CPython 3 is enough: the layouts are other tests' business; this is about finding processes.
NAMES = ["debian-3.11", "pyenv-3.12", "pyenv-3.11"]
RANKS = 3
FUNCTIONS = {"launcher": "launcher_waits_for_ranks", "rank0": "rank_waits_for_peers",
             "rank1": "odd_rank_is_elsewhere", "rank2": "rank_waits_for_peers",
             "worker": "worker_loop"}
EXIT_NOT_PERMITTED = 10
RUN_TIMEOUT = 300
START_TIMEOUT = 60
TORCH_START_TIMEOUT = 180  # each rank imports torch and meets the others over TCP


class JobTree(object):
    """collect_job.py running in a session of its own, killed (the whole session) on exit."""

    def __init__(self, python, workdir, prefix=None, environment=None):
        self.ready_dir = tempfile.mkdtemp(prefix="ready-", dir=workdir)
        argv = (prefix or []) + [python, JOB, self.ready_dir, str(RANKS)]
        self.process = subprocess.Popen(argv, start_new_session=True, env=environment)
        self.pid = self.process.pid

    def wait_ready(self, timeout=START_TIMEOUT):
        """{pid: role} of our Python processes once every one of them has written its file."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            roles = self.roles()
            if len(roles) == len(FUNCTIONS):
                return roles
            if self.process.poll() is not None:
                raise RuntimeError("collect_job.py exited with %d" % self.process.returncode)
            time.sleep(0.1)
        raise RuntimeError("collect_job.py: only %s ready after %d s" % (sorted(self.roles().values()), timeout))

    def roles(self):
        roles = {}
        for path in glob.glob(os.path.join(self.ready_dir, "*.ready")):
            role, pid = os.path.basename(path)[:-len(".ready")].rsplit("-", 1)
            roles[int(pid)] = role
        return roles

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()


def proc_children():
    """{ppid: [pid...]} from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as stat:
                text = stat.read()
        except (IOError, OSError):
            continue
        ppid = int(text[text.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    return children


def tree_of(root):
    children, found, queue = proc_children(), [], [root]
    while queue:
        pid = queue.pop(0)
        found.append(pid)
        queue.extend(children.get(pid, []))
    return found


def read_text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError):
        return ""


def state_of(pid):
    text = read_text("/proc/%d/stat" % pid)
    return text[text.rindex(")") + 2] if text else None


def expected_processes(job):
    """{pid: role} of every Python process of the job (with the resource_tracker, which writes no
    file), and the pids of the sleep child and of the zombie."""
    roles = job.wait_ready()
    python, sleep, zombies = dict(roles), [], []
    for pid in tree_of(job.pid):
        cmdline = read_text("/proc/%d/cmdline" % pid).replace("\0", " ")
        if "resource_tracker" in cmdline:
            python[pid] = "resource_tracker"
        elif cmdline.startswith("sleep"):
            sleep.append(pid)
        elif state_of(pid) == "Z":
            zombies.append(pid)
    return python, sleep, zombies


def run_collect(coreanalyze, args, prefix=(), environment=None, cwd=None):
    result = subprocess.run(list(prefix) + [coreanalyze, "collect"] + list(args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=RUN_TIMEOUT,
                            env=environment, cwd=cwd)
    return (result.returncode, result.stdout.decode("utf-8", "replace"),
            result.stderr.decode("utf-8", "replace"))


def load_json(path):
    with open(path) as handle:
        return json.load(handle)


def functions_in(document):
    return set(frame["function"] for thread in document.get("threads", [])
               for frame in thread.get("frames", []))


def check_node_dir(node_dir, python, sleep, zombies, label):
    """Problems with one node's results: a JSON per Python process with the function it blocks
    in, the others skipped in the manifest with the reason."""
    problems = []
    manifest_path = os.path.join(node_dir, "manifest.json")
    if not os.path.exists(manifest_path):
        return ["%s: no manifest.json in %s" % (label, node_dir)]
    manifest = load_json(manifest_path)
    by_pid = dict((item["pid"], item) for item in manifest["processes"])
    for pid, role in sorted(python.items()):
        path = os.path.join(node_dir, "%d.json" % pid)
        if not os.path.exists(path):
            problems.append("%s: no %d.json for %s (manifest: %s)" % (label, pid, role, by_pid.get(pid)))
            continue
        document = load_json(path)
        if document["process"]["pid"] != pid:
            problems.append("%s: %d.json is of pid %s" % (label, pid, document["process"]["pid"]))
        want = FUNCTIONS.get(role)
        if want and want not in functions_in(document):
            problems.append("%s: %s (pid %d) not in %s: %s" % (label, role, pid, want,
                                                                sorted(functions_in(document))))
        item = by_pid.get(pid)
        if item is None or item["json"] != "%d.json" % pid or item["skipped"] or not item["python"]:
            problems.append("%s: manifest entry of %s (pid %d): %s" % (label, role, pid, item))
        elif role.startswith("rank") and item["labels"].get("RANK") != role[4:]:
            problems.append("%s: %s's labels %s" % (label, role, item["labels"]))
    for pid in sleep:
        item = by_pid.get(pid)
        if item is None or item["python"] or "runs no Python" not in (item["skipped"] or ""):
            problems.append("%s: the sleep child (pid %d): %s" % (label, pid, item))
    for pid in zombies:
        item = by_pid.get(pid)
        if item is None or item["state"] != "Z" or "zombie" not in (item["skipped"] or ""):
            problems.append("%s: the zombie (pid %d): %s" % (label, pid, item))
    for pid in list(python) + sleep:
        if os.path.exists(os.path.join(node_dir, "%d.json" % pid)) and pid not in python:
            problems.append("%s: %d.json written for a process that runs no Python" % (label, pid))
    extra = set(int(os.path.basename(p)[:-5]) for p in glob.glob(os.path.join(node_dir, "*.json"))
                if os.path.basename(p)[:-5].isdigit()) - set(python)
    if extra:
        problems.append("%s: JSON of processes that are not the job's: %s" % (label, sorted(extra)))
    return problems


def not_stopped(pids):
    return ["pid %d left in state %s" % (pid, state_of(pid)) for pid in pids
            if state_of(pid) in ("t", "T")]


def has_triage(coreanalyze):
    result = subprocess.run([coreanalyze, "triage", "--help"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=30)
    return result.returncode == 0 and b"coreanalyze triage" in result.stdout


def tree_case(coreanalyze, python_path, workdir, select):
    with JobTree(python_path, workdir) as job:
        python, sleep, zombies = expected_processes(job)
        out_dir = os.path.join(workdir, "out-" + select)
        args = ["--pid", str(job.pid)] if select == "pid" else ["--name", "collect_job.py"]
        started = time.time()
        code, _, err = run_collect(coreanalyze, args + ["-o", out_dir, "--node-name", "here"])
        seconds = time.time() - started
        problems = [] if code == 0 else ["exit code %d: %s" % (code, err)]
        problems += check_node_dir(os.path.join(out_dir, "here"), python, sleep, zombies, select)
        problems += not_stopped(list(python))
        top = os.path.join(out_dir, "manifest.json")
        if not os.path.exists(top) or list(load_json(top)["nodes"]) != ["here"]:
            problems.append("top manifest.json missing or wrong")
        if not has_triage(coreanalyze) and ("results in %s" % out_dir) not in err:
            problems.append("no triage subcommand, and no line saying where the results are: %s" % err)
        return problems, seconds, len(python)


def cores_case(coreanalyze, python_path, workdir):
    if shutil.which("gcore") is None:
        return "needs gcore (gdb)"
    with JobTree(python_path, workdir) as job:
        roles = job.wait_ready()
        rank1 = [pid for pid, role in roles.items() if role == "rank1"][0]
        out_dir = os.path.join(workdir, "out-cores")
        code, _, err = run_collect(coreanalyze, ["--pid", str(rank1), "--cores", "snapshot", "-o",
                                                 out_dir, "--node-name", "n", "--no-triage"])
        problems = [] if code == 0 else ["exit code %d: %s" % (code, err)]
        manifest = load_json(os.path.join(out_dir, "n", "manifest.json"))
        for item in manifest["processes"]:
            if item["skipped"]:
                continue
            core = os.path.join(out_dir, "n", item["core"] or "-")
            if item["core"] != "%d.snapshot.core" % item["pid"] or not os.path.exists(core):
                problems.append("pid %d: no snapshot core: %s" % (item["pid"], item))
                continue
            size = os.path.getsize(core)
            if size > 64 << 20:
                problems.append("snapshot core of %d is %d bytes" % (item["pid"], size))
            result = subprocess.run([coreanalyze, core, "--json"], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
            want = FUNCTIONS.get(roles.get(item["pid"], ""))
            if result.returncode != 0:
                problems.append("coreanalyze %s: exit %d" % (core, result.returncode))
            elif want and want not in functions_in(json.loads(result.stdout)):
                problems.append("snapshot of %d lacks %s" % (item["pid"], want))
        if sorted(glob.glob(os.path.join(out_dir, "n", ".*"))):
            problems.append("temporary files left: %s" % glob.glob(os.path.join(out_dir, "n", ".*")))
        if len([i for i in manifest["processes"] if not i["skipped"]]) != 3:  # rank1, worker, tracker
            problems.append("want rank 1, its worker and the resource_tracker: %s" % manifest["processes"])
        problems += not_stopped(list(roles))
        shutil.rmtree(out_dir, ignore_errors=True)
        return problems


# What the shell in the mount namespace says once the tmpfs is mounted, before the collector runs:
# without it, the collector never ran and what failed is this machine's (no mount allowed...).
TMPFS_MOUNTED = "hangpy-test: the 16 MB tmpfs is mounted"
TMPFS_SCRIPT = ('mount -t tmpfs -o size=16m hangpy-small "$1" || exit 1; echo "%s" >&2; shift; '
                '"$@"; code=$?; cat "$OUT"/n/manifest.json; exit $code' % TMPFS_MOUNTED)


def in_private_namespace(unshare, small, argv):
    """argv run in a mount namespace whose mounts are all private, over a tmpfs on `small`:
    (the subprocess result, or None and why not). In a chroot, "/" is no mount point and unshare
    cannot make it private ("cannot change root filesystem propagation")."""
    result = subprocess.run([unshare, "--mount", "--propagation", "private", "sh", "-c",
                             TMPFS_SCRIPT, "sh", small] + argv, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=RUN_TIMEOUT, env=dict(os.environ, OUT=small))
    return mounted_or_why_not("unshare --mount --propagation private", result)


def on_private_bind_mount(unshare, small, argv):
    """The same where "/" is no mount point (a chroot): `small` is first bind-mounted on itself
    here and made private, so that the tmpfs mounted on it in the new namespace (mounts copied
    unchanged) propagates nowhere; the bind mount is undone after."""
    for command in (["mount", "--bind", small, small], ["mount", "--make-private", small]):
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=RUN_TIMEOUT)
        if done.returncode != 0:
            if command[1] != "--bind":
                subprocess.run(["umount", small], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            return None, "%s: exit %d: %s" % (" ".join(command), done.returncode,
                                              done.stdout.decode("utf-8", "replace").strip())
    try:
        result = subprocess.run([unshare, "--mount", "--propagation", "unchanged", "sh", "-c",
                                 TMPFS_SCRIPT, "sh", small] + argv, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, timeout=RUN_TIMEOUT,
                                env=dict(os.environ, OUT=small))
    finally:
        subprocess.run(["umount", small], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return mounted_or_why_not("mount --bind and --make-private %s, then unshare --mount" % small,
                              result)


def mounted_or_why_not(how, result):
    """(result with the marker line taken out of its stderr, None) when the tmpfs was mounted and
    the collector ran, else (None, what failed in full)."""
    err = result.stderr.decode("utf-8", "replace")
    if TMPFS_MOUNTED not in err:
        return None, "%s: exit %d: %s" % (how, result.returncode, err.strip() or "(no message)")
    result.stderr = err.replace(TMPFS_MOUNTED + "\n", "").encode("utf-8")
    return result, None


TMPFS_WAYS = (in_private_namespace, on_private_bind_mount)


def disk_space_case(coreanalyze, python_path, workdir):
    """--cores full into a 16 MB tmpfs mounted in a private mount namespace: refused up front.
    Why not (a string) when this machine cannot mount one (no root, no unshare, no gcore, no
    mount allowed: each way tried and its own error)."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0:
        return "needs root (to mount a 16 MB tmpfs)"
    if unshare is None:
        return "needs unshare (util-linux)"
    if shutil.which("gcore") is None:
        return "needs gcore (gdb)"
    small = os.path.join(workdir, "small")
    os.makedirs(small)
    with JobTree(python_path, workdir) as job:
        roles = job.wait_ready()
        rank0 = [pid for pid, role in roles.items() if role == "rank0"][0]
        argv = [coreanalyze, "collect", "--pid", str(rank0), "--cores", "full", "-o", small,
                "--node-name", "n", "--no-triage"]
        why_not = []
        for way in TMPFS_WAYS:
            result, reason = way(unshare, small, argv)
            if result is not None:
                break
            why_not.append(reason)
        else:
            return "no 16 MB tmpfs could be mounted here:\n" + "\n".join(why_not)
        err = result.stderr.decode("utf-8", "replace")
        problems = []
        if result.returncode != 5:
            problems.append("exit code %d, want 5 (JSON taken, core refused): %s" % (result.returncode, err))
        if "no core taken: it needs about" not in err or "MB free" not in err:
            problems.append("no line about the space needed and free: %s" % err)
        try:
            manifest = json.loads(result.stdout)
            item = [i for i in manifest["processes"] if i["pid"] == rank0][0]
            if item["json"] != "%d.json" % rank0 or item["core"] is not None:
                problems.append("manifest entry: %s" % item)
        except (ValueError, IndexError, KeyError) as error:
            problems.append("manifest: %s: %r" % (error, result.stdout[:300]))
        return problems


def closed_to_others(path):
    """Why other users may not reach `path` (the first directory down to it that they may not
    search), or None."""
    parts = os.path.abspath(path).split(os.sep)
    for index in range(1, len(parts) + 1):
        directory = os.sep.join(parts[:index]) or os.sep
        mode = os.stat(directory).st_mode
        if not mode & 0o001:
            return ("%s is closed to other users (mode %o); the directory another user runs "
                    "coreanalyze from must not be (set TMPDIR)" % (directory, mode & 0o7777))
    return None


def copy_for_another_user(coreanalyze):
    """(a copy of coreanalyze that every user may run, the 0755 temporary directory it is in,
    None), or (None, None, why not). The build's own may be in a clone other users may not
    enter (under /root, mode 0700); the build's coreanalyze needs no library of the build tree
    (ldd), and the collector runs itself again through /proc/self/exe: the copy. The caller
    removes the directory; it is also the working directory to give the other user."""
    directory = tempfile.mkdtemp(prefix="hangpy-bin-")
    os.chmod(directory, 0o755)
    why_not = closed_to_others(directory)
    if why_not:
        shutil.rmtree(directory, ignore_errors=True)
        return None, None, why_not
    copy = os.path.join(directory, "coreanalyze")
    shutil.copy(coreanalyze, copy)
    os.chmod(copy, 0o755)
    return copy, directory, None


def permission_case(coreanalyze, python_path, workdir):
    """The collector run as nobody, without privileges, on a root process: exit code 10 and a line
    saying what to do. Nobody runs a copy of coreanalyze (copy_for_another_user)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0:
        return "needs root (to run the collector as another user)"
    if setpriv is None:
        return "needs setpriv (util-linux)"
    os.chmod(workdir, 0o755)
    why_not = closed_to_others(workdir)
    if why_not:
        return why_not
    copy, bin_dir, why_not = copy_for_another_user(coreanalyze)
    if why_not:
        return why_not
    out_dir = os.path.join(workdir, "out-nobody")
    os.makedirs(out_dir)
    os.chmod(out_dir, 0o777)
    try:
        with JobTree(python_path, workdir) as job:
            roles = job.wait_ready()
            rank0 = [pid for pid, role in roles.items() if role == "rank0"][0]
            code, _, err = run_collect(copy, ["--pid", str(rank0), "-o", out_dir, "--node-name",
                                              "n", "--no-triage"],
                                       prefix=[setpriv, "--reuid=65534", "--regid=65534",
                                               "--clear-groups"], cwd=bin_dir)
            problems = []
            if code != EXIT_NOT_PERMITTED:
                problems.append("exit code %d, want %d: %s" % (code, EXIT_NOT_PERMITTED, err))
            if "not permitted" not in err or "as root (CAP_SYS_PTRACE)" not in err:
                problems.append("no line saying what to do: %s" % err)
            return problems + not_stopped([rank0])
    finally:
        shutil.rmtree(bin_dir, ignore_errors=True)


def pdsh_case(coreanalyze, python_path, workdir):
    if shutil.which("pdsh") is None:
        return None, 0
    with JobTree(python_path, workdir) as job:
        python, sleep, zombies = expected_processes(job)
        out_dir = os.path.join(workdir, "out-pdsh")
        # Both "hosts" are this machine: one at a time (FANOUT=1), or the second collector would
        # find the processes traced by the first.
        # pdsh's exec module resolves no name: each host is a label even where no /etc/hosts names
        # it. A bracket range, as a cluster's list is written (pdsh 2.34 prints it back compressed
        # with -q, so the nodes to expect are expanded by coreanalyze itself).
        environment = dict(os.environ, FANOUT="1")
        started = time.time()
        code, out, err = run_collect(coreanalyze, ["--pdsh", "node[01-02],localhost", "--pdsh-rcmd",
                                                   "exec", "--name", "collect_job.py", "-o", out_dir,
                                                   "--no-triage"], environment=environment)
        seconds = time.time() - started
        problems = [] if code == 0 else ["exit code %d: %s%s" % (code, out, err)]
        hosts = ["localhost", "node01", "node02"]
        for host in hosts:
            problems += check_node_dir(os.path.join(out_dir, host), python, sleep, zombies, host)
        top = load_json(os.path.join(out_dir, "manifest.json"))
        if sorted(top["nodes"]) != hosts or top["missing_nodes"]:
            problems.append("top manifest: nodes %s, missing %s" % (sorted(top["nodes"]), top["missing_nodes"]))
        return problems + not_stopped(list(python)), seconds


def usage_case(coreanalyze, workdir):
    """Bad selections: exit code 2 (usage) or 3 (nothing found), one line each."""
    problems = []
    out_dir = os.path.join(workdir, "out-usage")
    for args, want in ((["--pid", "12x"], 2), (["--pid", "1", "--name", "x"], 2),
                       (["--pdsh", "h", "--pid", "1"], 2), (["--cores", "some", "--pid", "1"], 2),
                       (["--name", "no-such-process-hangpy-collect", "-o", out_dir], 3)):
        code, _, err = run_collect(coreanalyze, args, environment=dict(os.environ, SLURM_JOB_ID=""))
        if code != want or len(err.strip().splitlines()) != 1:
            problems.append("collect %s: exit code %d (want %d), stderr %r" % (" ".join(args), code, want, err))
    return problems


def free_port():
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return listener.getsockname()[1]


def torchrun_argv(torchrun, ranks, log_dir):
    """torchrun and its options for `ranks` ranks on this machine, every address 127.0.0.1.

    Not --standalone: its rendezvous is at localhost:29400, and its agent hands the ranks this
    machine's host name as MASTER_ADDR; where names do not resolve (no /etc/hosts, as in a
    debootstrap chroot or many containers) the agent or the ranks cannot connect. The static
    rendezvous at --master_addr 127.0.0.1 on a free port needs no name. Debian's torch 1.13 under
    Python 3.11 reads --redirects/--tee "0" (their default) as None (Std.from_str iterates an
    IntFlag, which no longer yields the 0 member) and torchrun fails: they get other values."""
    return [torchrun, "--nnodes", "1", "--node_rank", "0", "--master_addr", "127.0.0.1",
            "--master_port", str(free_port()), "--nproc_per_node", str(ranks), "--redirects", "1",
            "--tee", "2", "--log_dir", log_dir]


def torch_environment():
    """The environment of a torch job of the tests: one OpenMP thread a process, and gloo on
    the loopback interface (else it looks this machine's host name up)."""
    environment = dict(os.environ, OMP_NUM_THREADS="1")
    environment.setdefault("GLOO_SOCKET_IFNAME", "lo")
    return environment


def output_tail(path, chars=8000):
    """The end of a log file (a launcher's own output), for a failure's message."""
    try:
        with open(path, "rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - chars))
            return log.read().decode("utf-8", "replace")
    except OSError as error:
        return "(%s)" % error


def torchrun_case(coreanalyze, workdir):
    """A real torchrun (Debian's python3-torch): the elastic agent and its 2 gloo ranks, rank 0 in
    all_reduce and rank 1 elsewhere, their RANK/LOCAL_RANK/WORLD_SIZE in the manifest. None when
    torch is not installed."""
    torchrun = shutil.which("torchrun")
    if torchrun is None or not os.path.isdir("/usr/lib/python3/dist-packages/torch"):
        return None, 0
    ready_dir = tempfile.mkdtemp(prefix="ready-torch-", dir=workdir)
    argv = torchrun_argv(torchrun, 2, os.path.join(workdir, "torchrun-logs")) + [
        os.path.join(PROGRAMS, "torchrun_hang.py"), ready_dir]
    log_path = os.path.join(workdir, "torchrun.log")
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=subprocess.STDOUT, env=torch_environment())
    try:
        deadline = time.time() + TORCH_START_TIMEOUT
        while len(glob.glob(os.path.join(ready_dir, "*.ready"))) < 2:
            if time.time() > deadline or process.poll() is not None:
                return ["torchrun's ranks did not start (exit %s); %s; its output:\n%s"
                        % (process.poll(), " ".join(argv), output_tail(log_path))], 0
            time.sleep(0.2)
        time.sleep(1)  # from its ready file to all_reduce
        ranks = {}
        for path in glob.glob(os.path.join(ready_dir, "*.ready")):
            role, pid = os.path.basename(path)[:-len(".ready")].rsplit("-", 1)
            ranks[int(pid)] = role
        out_dir = os.path.join(workdir, "out-torchrun")
        started = time.time()
        code, _, err = run_collect(coreanalyze, ["--pid", str(process.pid), "-o", out_dir,
                                                 "--node-name", "n", "--no-triage"])
        seconds = time.time() - started
        problems = [] if code == 0 else ["exit code %d: %s" % (code, err)]
        manifest = load_json(os.path.join(out_dir, "n", "manifest.json"))
        by_pid = dict((item["pid"], item) for item in manifest["processes"])
        agent = by_pid.get(process.pid)
        if agent is None or agent["json"] is None:
            problems.append("no JSON of the torchrun agent: %s" % agent)
        for pid, role in sorted(ranks.items()):
            item = by_pid.get(pid)
            if item is None or item["json"] is None:
                problems.append("no JSON of %s: %s" % (role, item))
                continue
            functions = functions_in(load_json(os.path.join(out_dir, "n", item["json"])))
            want = "all_reduce" if role == "rank0" else "rank_one_waits_elsewhere"
            if want not in functions:
                problems.append("%s: %s not in %s" % (role, want, sorted(functions)))
            labels = item["labels"]
            if (labels.get("RANK"), labels.get("LOCAL_RANK"), labels.get("WORLD_SIZE")) != (role[4:], role[4:], "2"):
                problems.append("%s: labels %s" % (role, labels))
        for item in manifest["processes"]:
            if item["json"] is None and not item["skipped"]:
                problems.append("neither taken nor skipped: %s" % item)
        return problems + not_stopped(list(ranks) + [process.pid]), seconds
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    installed = list(interpreters.each_installed(NAMES, results))
    if not installed:
        return results.finish()
    name, interpreter = installed[0]
    workdir = tempfile.mkdtemp(prefix="hangpy-collect-")
    try:
        results.check("usage errors and an empty selection", usage_case(args.coreanalyze, workdir))
        for select in ("pid", "name"):
            problems, seconds, count = tree_case(args.coreanalyze, interpreter.executable, workdir, select)
            results.check("%s --%s: %d Python processes in %.2f s, sleep and zombie skipped"
                          % (name, select, count, seconds), problems)
        for label, case in (("--cores snapshot", cores_case),
                            ("--cores full refused on a 16 MB file system", disk_space_case),
                            ("not permitted (another user)", permission_case)):
            problems = case(args.coreanalyze, interpreter.executable, workdir)
            if isinstance(problems, str):  # why it cannot run here
                results.report("SKIP", "%s %s" % (name, label), [problems])
            else:
                results.check("%s %s" % (name, label), problems)
        problems, seconds = torchrun_case(args.coreanalyze, workdir)
        if problems is None:
            results.report("SKIP", "torchrun", ["python3-torch is not installed (scripts/install-deps)"])
        else:
            results.check("torchrun --nproc_per_node=2 (gloo): agent and ranks in %.2f s" % seconds,
                          problems)
        problems, seconds = pdsh_case(args.coreanalyze, interpreter.executable, workdir)
        if problems is None:
            results.report("SKIP", "pdsh -R exec", ["pdsh is not installed (apt-get install pdsh)"])
        else:
            results.check("%s pdsh -R exec -w node[01-02],localhost (%.2f s)" % (name, seconds), problems)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        results.check("collect", [str(error)])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
