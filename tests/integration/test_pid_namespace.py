#!/usr/bin/python3
"""Integration test (issue 36): a process in a PID namespace of its own, as a container's process
is, read from the host. tests/programs/namespaced_threads.py runs under `unshare --fork --pid
--mount-proc` (Debian's 3.11, pyenv's 3.8-3.13 where installed) and writes the ids its
interpreter gives inside the namespace: its pid (1) and each thread's native id.

- `coreanalyze --pid HOSTPID --json`: each thread's native_thread_id is one of the process's host
  threads and its namespace_thread_id is the id the interpreter gave; no thread is "without
  Python"; the sleeper is in its sleep, not "running"; the churning thread was stopped (the note
  says how many threads were stopped); process.container says it has a PID namespace of its own;
- the text names both ids ("LWP 23513, 1 in its namespace");
- the host's gcore of it: the same threads matched (by their thread pointers);
- 100 reads of the churning process (Debian's 3.11): 100 whole stacks, none broken;
- with process_vm_readv failing with ENOSYS (a seccomp filter, as on kernels without
  CONFIG_CROSS_MEMORY_ATTACH): the same threads, read through /proc/PID/mem, and one warning.

Exit status: 0 passed, 1 failed, 77 unshare (or a PID namespace) is not available.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
from results import Results, SKIP  # noqa: E402

INTERPRETERS = ("debian-3.11", "pyenv-3.8", "pyenv-3.10", "pyenv-3.12", "pyenv-3.13")
CHURN_READS = 100
PROGRAMS = cores.PROGRAMS


def host_pid_of(unshare_pid):
    """The interpreter's host PID: the child of `unshare --fork`."""
    for path in glob.glob("/proc/%d/task/*/children" % unshare_pid):
        with open(path) as stream:
            children = stream.read().split()
        if children:
            return int(children[0])
    return None


def host_threads(pid):
    return sorted(int(os.path.basename(path)) for path in glob.glob("/proc/%d/task/*" % pid))


def run(argv, timeout=60):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return result.returncode, result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace")


def thread_problems(document, truth, tids, label):
    """Every thread of the truth is read, matched to a host thread, its namespace id kept."""
    problems = []
    by_name = dict((t.get("name"), t) for t in document.get("threads", []))
    for name, namespace_id in sorted(truth["threads"].items()):
        thread = by_name.get(name)
        if thread is None:
            problems.append("%s: thread %r not read (threads: %s)" % (label, name, sorted(by_name, key=str)))
            continue
        if thread.get("native_thread_id") not in tids:
            problems.append("%s: %s's native_thread_id %r is none of the host's threads %s"
                            % (label, name, thread.get("native_thread_id"), tids))
        if thread.get("namespace_thread_id") != namespace_id:
            problems.append("%s: %s's namespace_thread_id %r, the interpreter said %d"
                            % (label, name, thread.get("namespace_thread_id"), namespace_id))
        if thread.get("error"):
            problems.append("%s: %s's frames end early: %s" % (label, name, thread["error"]))
    if document.get("threads_without_python"):
        problems.append("%s: threads said to run no Python: %s" % (label, document["threads_without_python"]))
    sleeper = by_name.get("sleeper", {})
    kind = (sleeper.get("blocked_on") or {}).get("kind")
    if kind != "sleep":
        problems.append("%s: the sleeper waits for %r, want sleep" % (label, kind))
    return problems


def live_problems(coreanalyze, pid, truth, tids):
    code, out, err = run([coreanalyze, "--pid", str(pid), "--json"])
    if code != 0:
        return ["--pid --json: exit %d: %s" % (code, err[-400:])]
    document = json.loads(out)
    problems = thread_problems(document, truth, tids, "--pid --json")
    container = document.get("process", {}).get("container") or {}
    if container.get("own_pid_namespace") is not True:
        problems.append("process.container %r does not say it has a PID namespace of its own" % container)
    code, out, err = run([coreanalyze, "--pid", str(pid)])
    if "were stopped" not in err:
        problems.append("the churning thread was not stopped: %r" % err)
    want = "(LWP %d, %d in its namespace) \"MainThread\"" % (pid, truth["threads"]["MainThread"])
    if want not in out:
        problems.append("the text lacks %r" % want)
    return problems


def churn_problems(coreanalyze, pid):
    """CHURN_READS reads: every one whole (no thread's frames end early, every thread there)."""
    broken = []
    for read in range(CHURN_READS):
        code, out, err = run([coreanalyze, "--pid", str(pid), "--json"])
        if code != 0:
            broken.append("read %d: exit %d: %s" % (read, code, err.strip()[-200:]))
            continue
        threads = json.loads(out).get("threads", [])
        errors = [t.get("error") for t in threads if t.get("error")]
        if errors or len(threads) != 3:
            broken.append("read %d: %d threads, errors %s" % (read, len(threads), errors))
    return broken[:5] + (["... %d broken reads of %d" % (len(broken), CHURN_READS)] if broken else [])


def fallback_problems(coreanalyze, pid, truth, tids, workdir):
    """process_vm_readv made to fail with ENOSYS: /proc/PID/mem reads the same."""
    wrapper = os.path.join(workdir, "no_process_vm_readv")
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    subprocess.run([compiler, "-O1", "-o", wrapper, os.path.join(PROGRAMS, "no_process_vm_readv.c")], check=True)
    code, out, err = run([wrapper, coreanalyze, "--pid", str(pid), "--json"])
    if code != 0:
        return ["exit %d: %s" % (code, err[-400:])]
    problems = thread_problems(json.loads(out), truth, tids, "/proc/PID/mem")
    code, out, err = run([wrapper, coreanalyze, "--pid", str(pid)])
    if code != 0:
        problems.append("text: exit %d: %s" % (code, err[-400:]))
    if err.count("no process_vm_readv (ENOSYS): memory was read through /proc/PID/mem") != 1:
        problems.append("the fallback is not said once: %r" % err)
    return problems


def main():
    parser = __import__("argparse").ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "--fork", "--pid", "--mount-proc", "true"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        print("SKIP unshare --pid --mount-proc cannot run here (util-linux, and CAP_SYS_ADMIN)")
        return SKIP
    coreanalyze = os.path.abspath(args.coreanalyze)
    workdir = tempfile.mkdtemp(prefix="hangpy-pidns-")
    try:
        for name, interpreter in interpreters.each_installed(INTERPRETERS, results):
            truth_path = os.path.join(workdir, "truth-%s.json" % name)
            process = subprocess.Popen([unshare, "--fork", "--pid", "--mount-proc", interpreter.executable,
                                        os.path.join(PROGRAMS, "namespaced_threads.py"), truth_path],
                                       stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                truth = cores.truth_when_blocked(process, truth_path, 30, settle=0.3)
                pid = host_pid_of(process.pid)
                if truth is None or pid is None:
                    results.report("FAIL", "%s: the program never started in its namespace" % name)
                    continue
                tids = host_threads(pid)
                if truth["pid"] == pid:
                    results.report("FAIL", "%s: the process is not in a PID namespace of its own" % name)
                    continue
                results.check("%s: --pid of a process in its own PID namespace: threads matched, both ids"
                              % name, live_problems(coreanalyze, pid, truth, tids))
                if name == "debian-3.11":
                    started = time.time()
                    problems = churn_problems(coreanalyze, pid)
                    results.check("%s: %d reads of a churning namespaced process, all whole (%.1f s)"
                                  % (name, CHURN_READS, time.time() - started), problems)
                    problems = fallback_problems(coreanalyze, pid, truth, tids, workdir)
                    if problems is None:
                        results.report("SKIP", "process_vm_readv fallback", ["no C compiler to build the seccomp wrapper"])
                    else:
                        results.check("%s: process_vm_readv failing with ENOSYS: read through /proc/PID/mem" % name,
                                      problems)
                core = cores.gcore(pid, os.path.join(workdir, "core-%s" % name))
                code, out, err = run([coreanalyze, core, "--json"])
                problems = ["core: exit %d: %s" % (code, err[-400:])] if code != 0 else \
                    thread_problems(json.loads(out), truth, tids, "gcore")
                results.check("%s: the host's gcore of it: threads matched by their thread pointers" % name, problems)
                os.unlink(core)
            except cores.CoreError as error:
                results.report("FAIL", "%s: %s" % (name, error))
            finally:
                os.killpg(process.pid, 9)
                process.wait()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
