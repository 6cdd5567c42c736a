#!/usr/bin/python3
"""Integration test (issue 36): hung Python jobs in real Podman containers, read from the node
and through `podman exec`, with the ground truth the interpreter writes inside the container.

The image is made here (`podman import` of a skeleton root: no registry); the host's /usr (and a
pyenv build, where one is read) is mounted read-only into it, so the container runs the host's
own interpreters in namespaces of its own: PID, mount, UTS (a --hostname of its own), cgroup
(libpod-ID). Debian's podman 4.3 runs rootful containers here with --runtime runc and the file and
process limits at 1024 (no CAP_SYS_RESOURCE), and --network none (no network plugin needed).

- A pipe cycle (tests/programs/job_pipe_cycle.py: a parent in Popen.wait, a child blocked
  writing the pipe): `--pid HOSTPID --json` names the container (podman, its id as `podman
  inspect` says, its name) and the process's PID in it (1), and the parent waits for its child by
  the child's host PID (child_namespace_pid: the PID the parent knows it by, as it wrote);
  `collect --container NAME` and `--container ID-PREFIX` take the two processes alone and the
  triage states the cycle and names the container; `collect --via 'podman exec NAME'` (coreanalyze
  copied in through podman exec's stdin) brings back the same cycle.
- Threads (tests/programs/namespaced_threads.py: a sleeper, a churner that never stops running,
  the main thread waiting; Debian's 3.11 and pyenv's 3.13): every thread matched to its host
  thread with both ids, the churner stopped; 100 reads of the churning process, all whole (3.11);
  the host's gcore; and the kernel's own core written inside the container (namespace ids
  throughout), each thread read with the ids the interpreter gave.
- A job that runs as another user than the one `podman exec` enters as, in a container without
  CAP_SYS_PTRACE: `collect --via` exits 10 and says how to give the container the capability.

Exit status: 0 passed, 1 failed, 77 podman is absent or cannot run a container here.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
import test_pid_namespace as pidns  # noqa: E402
from results import Results, SKIP  # noqa: E402

IMAGE = "localhost/hangpy-test-root"
RUN_OPTIONS = ["--runtime", "runc", "--network", "none", "--ulimit", "nofile=1024:1024",
               "--ulimit", "nproc=1024:1024"]
THREAD_INTERPRETERS = ("debian-3.11", "pyenv-3.13")


def podman(*args, timeout=120):
    result = subprocess.run(["podman"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, timeout=timeout)
    return result.returncode, result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace")


def make_image(workdir):
    """The image: a root with empty mount points and links into /usr (Debian's merged /usr)."""
    if podman("image", "exists", IMAGE)[0] == 0:
        return None
    root = os.path.join(workdir, "image-root")
    for directory in ("usr", "etc", "tmp", "proc", "sys", "dev", "run", "out", "job", "root", "var/tmp"):
        os.makedirs(os.path.join(root, directory))
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    for link in ("bin", "lib", "lib64", "sbin"):
        os.symlink("usr/" + link, os.path.join(root, link))
    with open(os.path.join(root, "etc", "passwd"), "w") as out:
        out.write("root:x:0:0:root:/root:/bin/sh\nworker:x:1000:1000:worker:/tmp:/bin/sh\n")
    with open(os.path.join(root, "etc", "group"), "w") as out:
        out.write("root:x:0:\nworker:x:1000:\n")
    archive = os.path.join(workdir, "image-root.tar")
    with tarfile.open(archive, "w") as tar:
        tar.add(root, arcname=".")
    code, _, err = podman("import", "--change", 'CMD ["/bin/sh"]', archive, IMAGE)
    return None if code == 0 else "podman import failed: %s" % err.strip()[-300:]


class Container:
    """A container started detached, removed at the end."""

    def __init__(self, name, outdir, argv, extra=(), mounts=()):
        self.name = name
        volumes = ["-v", "/usr:/usr:ro", "-v", "%s:/job:ro" % cores.PROGRAMS, "-v", "%s:/out" % outdir]
        for mount in mounts:
            volumes += ["-v", "%s:%s:ro" % (mount, mount)]
        code, out, err = podman("run", "-d", "--name", name, "--hostname", name, *RUN_OPTIONS, *volumes,
                                *extra, IMAGE, *argv)
        self.error = None if code == 0 else err.strip()[-400:]
        self.id = out.strip() if code == 0 else ""

    def host_pid(self):
        code, out, _ = podman("inspect", "--format", "{{.State.Pid}}", self.name)
        return int(out.strip()) if code == 0 and out.strip().isdigit() else None

    def remove(self):
        podman("rm", "-f", "-t", "0", self.name)


def run(argv, timeout=120):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return result.returncode, result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace")


def ready(outdir, count, seconds=30):
    """{role: (namespace pid, truth)} once `count` .ready files are there."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        found = glob.glob(os.path.join(outdir, "*.ready"))
        if len(found) == count:
            time.sleep(0.3)
            roles = {}
            for path in found:
                role, pid = os.path.basename(path)[:-len(".ready")].rsplit("-", 1)
                with open(path) as stream:
                    roles[role] = (int(pid), json.load(stream))
            return roles
        time.sleep(0.1)
    return None


def children_of(pid):
    found = []
    for path in glob.glob("/proc/%d/task/*/children" % pid):
        with open(path) as stream:
            found += [int(word) for word in stream.read().split()]
    return found


def first_line(text):
    return text.splitlines()[0] if text.strip() else ""


def pipe_cycle_case(coreanalyze, workdir, results, suffix):
    name = "hangpy-test-job-%s" % suffix
    outdir = os.path.join(workdir, name)
    os.makedirs(outdir)
    container = Container(name, outdir, ["/usr/bin/python3", "/job/job_pipe_cycle.py", "/out"])
    try:
        if container.error:
            results.report("FAIL", "podman run of the pipe cycle", [container.error])
            return
        roles = ready(outdir, 2)
        parent = container.host_pid()
        children = children_of(parent) if parent else []
        if not roles or not parent or len(children) != 1:
            results.report("FAIL", "the pipe cycle never blocked in its container", [str(roles), str(parent)])
            return
        child = children[0]
        inner_child = roles["parent"][1]["child_pid"]

        code, out, err = run([coreanalyze, "--pid", str(parent), "--json"])
        problems = [] if code == 0 else ["exit %d: %s" % (code, err[-300:])]
        if code == 0:
            process = json.loads(out)["process"]
            container_json = process.get("container") or {}
            want = {"runtime": "podman", "id": container.id, "name": name, "own_pid_namespace": True}
            for key, value in want.items():
                if container_json.get(key) != value:
                    problems.append("process.container.%s is %r, want %r" % (key, container_json.get(key), value))
            if process.get("namespace_pid") != roles["parent"][0]:
                problems.append("process.namespace_pid %r, the interpreter said %d" % (process.get("namespace_pid"), roles["parent"][0]))
            main = [t for t in json.loads(out)["threads"] if t.get("name") == "MainThread"]
            blocked = (main[0].get("blocked_on") or {}) if main else {}
            if blocked.get("child_pid") != child or blocked.get("child_namespace_pid") != inner_child:
                problems.append("the parent waits for child %r (%r in its namespace), want %d (%d)"
                                % (blocked.get("child_pid"), blocked.get("child_namespace_pid"), child, inner_child))
        code, out, err = run([coreanalyze, "--pid", str(parent)])
        for want in ('in podman container %s "%s" (its own PID namespace, where it is PID 1)' % (container.id[:12], name),
                     "child process %d (%d in its namespace)" % (child, inner_child)):
            if want not in out:
                problems.append("the text lacks %r" % want)
        results.check("--pid of a container's process: the container, its PID there, the child by its host PID", problems)

        for which in (name, container.id[:12]):
            collected = os.path.join(workdir, "collect-%s" % which)
            code, out, err = run([coreanalyze, "collect", "--container", which, "-o", collected, "--node-name", "n"])
            taken = sorted(int(os.path.basename(p)[:-5]) for p in glob.glob(os.path.join(collected, "n", "*.json"))
                           if os.path.basename(p)[0].isdigit())
            problems = [] if code == 0 else ["exit %d: %s" % (code, err[-300:])]
            if taken != sorted([parent, child]):
                problems.append("took %s, want %s" % (taken, sorted([parent, child])))
            line = first_line(out)
            for want in ("each waits for the other: ", "in podman %s)" % name):
                if want not in line:
                    problems.append("the triage's first line %r lacks %r" % (line, want))
            results.check("collect --container %s: the two processes, their cycle, the container named" % which, problems)

        # Snapshot cores alone: each keeps its namespace's PIDs (a note), so the cycle still closes.
        collected = os.path.join(workdir, "collect-snapshots")
        code, out, err = run([coreanalyze, "collect", "--container", name, "--cores", "snapshot", "-o", collected,
                              "--node-name", "n", "--no-triage"])
        snapshots = sorted(glob.glob(os.path.join(collected, "n", "*.snapshot.core")))
        problems = [] if code == 0 and len(snapshots) == 2 else ["exit %d, %d snapshots: %s" % (code, len(snapshots), err[-300:])]
        if not problems:
            code, out, err = run([coreanalyze, "triage"] + snapshots)
            if "each waits for the other: " not in first_line(out):
                problems.append("the triage of the snapshot cores: first line %r states no cycle" % first_line(out))
            code, out, err = run([coreanalyze, os.path.join(collected, "n", "%d.snapshot.core" % parent)])
            if "child process %d (%d in its namespace)" % (child, inner_child) not in out:
                problems.append("the parent's snapshot does not name its child by both PIDs")
        results.check("collect --container --cores snapshot: the cycle from the snapshot cores alone", problems)

        collected = os.path.join(workdir, "collect-via")
        code, out, err = run([coreanalyze, "collect", "--via", "podman exec %s" % name, "-o", collected])
        names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(collected, name, "*.json")))
        want_names = sorted(["%d.json" % roles["parent"][0], "%d.json" % inner_child, "manifest.json"])
        problems = [] if code == 0 else ["exit %d: %s" % (code, err[-400:])]
        if names != want_names:
            problems.append("brought back %s, want %s" % (names, want_names))
        if "copied" not in err or "into the container" not in err:
            problems.append("no line says coreanalyze was copied in: %r" % err[-400:])
        if "each waits for the other: " not in first_line(out):
            problems.append("the triage's first line %r states no cycle" % first_line(out))
        results.check("collect --via 'podman exec %s': collected inside, copied back, the cycle" % name, problems)

        # kubectl's command line, with no cluster: a kubectl on PATH that runs `kubectl exec -i POD
        # -c C -- CMD...` as `podman exec -i POD CMD...`, and fails on anything else.
        bin_dir = os.path.join(workdir, "fake-kubectl")
        os.makedirs(bin_dir)
        with open(os.path.join(bin_dir, "kubectl"), "w") as script:
            script.write('#!/bin/sh\n[ "$1 $2" = "exec -i" ] && [ "$4 $5 $6" = "-c main --" ] || '
                         '{ echo "kubectl: unexpected: $*" >&2; exit 64; }\n'
                         'pod=$3; shift 6; exec podman exec -i "$pod" "$@"\n')
        os.chmod(os.path.join(bin_dir, "kubectl"), 0o755)
        collected = os.path.join(workdir, "collect-kubectl")
        environment = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"])
        result = subprocess.run([coreanalyze, "collect", "--via", "kubectl exec %s -c main --" % name, "-o", collected],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment, timeout=120)
        names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(collected, name, "*.json")))
        problems = [] if result.returncode == 0 else ["exit %d: %s" % (result.returncode, result.stderr[-400:])]
        if names != want_names:
            problems.append("brought back %s into %s/, want %s" % (names, name, want_names))
        results.check("collect --via 'kubectl exec POD -c main --': -i given, the pod names the results", problems)
    finally:
        container.remove()


def kernel_core_problems(document, truth):
    """A core the kernel wrote inside the namespace knows no other ids: each thread is read under
    the id the interpreter gave, and is whole; the sleeper sleeps."""
    problems = []
    by_name = dict((t.get("name"), t) for t in document.get("threads", []))
    for name, namespace_id in sorted(truth["threads"].items()):
        thread = by_name.get(name)
        if thread is None:
            problems.append("thread %r not read (threads: %s)" % (name, sorted(by_name, key=str)))
        elif thread.get("native_thread_id") != namespace_id or thread.get("error"):
            problems.append("%s: native_thread_id %r (the interpreter said %d), error %r"
                            % (name, thread.get("native_thread_id"), namespace_id, thread.get("error")))
    if document.get("threads_without_python"):
        problems.append("threads said to run no Python: %s" % document["threads_without_python"])
    if ((by_name.get("sleeper") or {}).get("blocked_on") or {}).get("kind") != "sleep":
        problems.append("the sleeper does not sleep: %r" % (by_name.get("sleeper") or {}).get("blocked_on"))
    return problems


def threads_case(coreanalyze, workdir, results, name_of, interpreter, suffix):
    name = "hangpy-test-threads-%s-%s" % (name_of.replace(".", ""), suffix)
    outdir = os.path.join(workdir, name)
    os.makedirs(outdir)
    executable = interpreter.executable
    mounts = [] if executable.startswith("/usr/") else [os.path.dirname(os.path.dirname(executable))]
    # Under a shell: PID 1 of a namespace takes no signal it has no handler for, and the kernel
    # core below needs the interpreter to die of one. The core goes to its working directory.
    script = "ulimit -c unlimited; cd /out && %s /job/namespaced_threads.py /out/truth.json; sleep 30" % executable
    container = Container(name, outdir, ["/bin/sh", "-c", script], mounts=mounts)
    try:
        if container.error:
            results.report("FAIL", "%s: podman run" % name_of, [container.error])
            return
        truth_path = os.path.join(outdir, "truth.json")
        deadline = time.time() + 30
        while not os.path.exists(truth_path) and time.time() < deadline:
            time.sleep(0.1)
        shell = container.host_pid()
        children = children_of(shell) if shell else []
        if not os.path.exists(truth_path) or len(children) != 1:
            results.report("FAIL", "%s: the threads program never started in its container" % name_of)
            return
        time.sleep(0.3)
        with open(truth_path) as stream:
            truth = json.load(stream)
        pid = children[0]
        tids = pidns.host_threads(pid)
        results.check("%s in podman: --pid, threads matched with both ids, the churner stopped" % name_of,
                      pidns.live_problems(coreanalyze, pid, truth, tids))
        if name_of == "debian-3.11":
            started = time.time()
            problems = pidns.churn_problems(coreanalyze, pid)
            results.check("%s in podman: %d reads of the churning process, all whole (%.1f s)"
                          % (name_of, pidns.CHURN_READS, time.time() - started), problems)
        core = cores.gcore(pid, os.path.join(workdir, "gcore-%s" % name))
        code, out, err = run([coreanalyze, core, "--json"])
        problems = ["exit %d: %s" % (code, err[-300:])] if code != 0 else \
            pidns.thread_problems(json.loads(out), truth, tids, "gcore")
        results.check("%s in podman: the host's gcore, threads matched by their thread pointers" % name_of, problems)
        os.unlink(core)
        if cores.kernel_core_unavailable_reason():
            results.report("SKIP", "%s in podman: the kernel's core" % name_of, [cores.kernel_core_unavailable_reason()])
            return
        os.kill(pid, 11)
        deadline = time.time() + 30
        found = []
        while not found and time.time() < deadline:
            time.sleep(0.2)
            found = [p for p in glob.glob(os.path.join(outdir, "core*")) if os.path.getsize(p) > 0]
        if not found:
            results.report("FAIL", "%s in podman: no kernel core written in the container's /out" % name_of)
            return
        time.sleep(1)  # the kernel has finished writing it when the shell goes on; wait for that
        code, out, err = run([coreanalyze, found[0], "--json"])
        problems = ["exit %d: %s" % (code, err[-300:])] if code != 0 else kernel_core_problems(json.loads(out), truth)
        results.check("%s in podman: the kernel's core written inside (namespace ids throughout)" % name_of, problems)
    finally:
        container.remove()


def refused_case(coreanalyze, workdir, results, suffix):
    name = "hangpy-test-refused-%s" % suffix
    outdir = os.path.join(workdir, name)
    os.makedirs(outdir)
    os.chmod(outdir, 0o777)
    container = Container(name, outdir, ["/usr/bin/python3", "/job/namespaced_threads.py", "/out/truth.json"],
                          extra=["--user", "1000:1000"])
    try:
        deadline = time.time() + 30
        while not os.path.exists(os.path.join(outdir, "truth.json")) and time.time() < deadline:
            time.sleep(0.1)
        code, out, err = run([coreanalyze, "collect", "--via", "podman exec --user 0 %s" % name,
                              "-o", os.path.join(workdir, "collect-refused"), "--no-triage"])
        problems = [] if code == 10 else ["exit %d, want 10 (not permitted): %s" % (code, err[-400:])]
        for want in ("not permitted", "--cap-add SYS_PTRACE", "kubectl debug"):
            if want not in err:
                problems.append("the messages lack %r: %r" % (want, err[-600:]))
        results.check("collect --via into a container without CAP_SYS_PTRACE: exit 10, how to give it", problems)
    finally:
        container.remove()


def main():
    parser = __import__("argparse").ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    if shutil.which("podman") is None:
        print("SKIP podman is not installed (scripts/install-deps installs it)")
        return SKIP
    workdir = tempfile.mkdtemp(prefix="hangpy-podman-")
    try:
        problem = make_image(workdir)
        if problem:
            print("SKIP %s" % problem)
            return SKIP
        code, _, err = podman("run", "--rm", *RUN_OPTIONS, "-v", "/usr:/usr:ro", IMAGE, "/bin/true")
        if code != 0:
            print("SKIP podman cannot run a container here: %s" % err.strip()[-300:])
            return SKIP
        results = Results()
        coreanalyze = os.path.abspath(args.coreanalyze)
        suffix = str(os.getpid())
        pipe_cycle_case(coreanalyze, workdir, results, suffix)
        for name_of, interpreter in interpreters.each_installed(THREAD_INTERPRETERS, results):
            threads_case(coreanalyze, workdir, results, name_of, interpreter, suffix)
        refused_case(coreanalyze, workdir, results, suffix)
        return results.finish()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
