#!/usr/bin/python3
"""Integration test: the "capture before the kill" recipes of docs/recipes.md, each armed as a
user would arm it and set off by the real killer, with real processes and no person present.
Each hung program writes, before it blocks, the name of the function it blocks in (its own
frame's co_name): the ground truth. Every capture must leave a directory with that process's
JSON naming the function, its snapshot core (read back: the same function), and DIR/triage.txt
naming it.

- gunicorn (Debian's, with docs/recipes/gunicorn.conf.py, --timeout 3 --workers 2): one request
  blocks in Python (a Lock taken twice), one in C holding the GIL (ctypes.PyDLL's sleep, so no
  Python signal handler can run in the worker); the arbiter's timeout captures each worker, then
  kills it, and gunicorn boots another. Run as root, and as nobody (gunicorn and the collector
  of another user; this machine's kernel may have no Yama, so the PR_SET_PTRACER of post_fork is
  then only called, not needed);
- DataLoader (Debian's python3-torch; docs/recipes/dataloader_timeout.py): num_workers=2,
  timeout=3, one worker blocks on an Event nobody sets; the error raised is a RuntimeError naming
  the stuck worker's PID and function, with torch's "DataLoader timed out" as __cause__;
- SLURM (Debian's slurm-wlm, slurmctld + slurmd on loopback as test_collect_slurm.py starts
  them): two jobs of docs/recipes/slurm-time-limit.sbatch with --time=1 --signal=B:USR1@50, so
  that slurmctld's own time-limit check sends USR1 (it checks every 30 s: 10 to 40 s after the
  start); one collects through `collect --slurm-job` (HANGPY_SCOPE=local), the other through
  `collect --srun` with the Yama opt-in of HANGPY_TRACEABLE=1 (its sitecustomize shim loaded in
  the job's Python, which still runs Debian's own sitecustomize). Skipped, saying why, without
  slurm-wlm, without root, or when the daemons do not come up.

Every process started here (gunicorn, the programs, the SLURM daemons and jobs, the collectors
the recipes start) is killed on every path. --only NAME runs one case (gunicorn, dataloader,
slurm); --keep keeps the work directory.

Exit status: 0 passed, 1 failed, 77 nothing could run here (no Debian python3 with gunicorn,
torch or SLURM).
"""
import argparse
import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_collect  # noqa: E402
import test_collect_slurm  # noqa: E402
from results import Results  # noqa: E402

RECIPES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "docs", "recipes")
PYTHON = "/usr/bin/python3"  # Debian's, which the gunicorn and python3-torch packages are for
WAIT = 40  # seconds for a hang to be noticed, captured and killed (gunicorn, DataLoader)
SLURM_WAIT = 150  # from sbatch to the capture: the USR1 comes at slurmctld's next 30 s check

GUNICORN_APP = r'''
import ctypes, os, sys, threading

def note():
    """Ground truth: the caller's function, written by the interpreter before it blocks."""
    name = sys._getframe(1).f_code.co_name
    with open(os.path.join(os.environ["GROUND_DIR"], "%s-%d" % (name, os.getpid())), "w") as out:
        out.write(name)

def stuck_in_python():
    lock = threading.Lock()
    lock.acquire()
    note()
    lock.acquire()

def stuck_in_c_holding_the_gil():
    note()
    libc = ctypes.PyDLL(None)  # PyDLL: the GIL stays held during the call
    mutex = ctypes.create_string_buffer(64)  # zeroed: an unlocked pthread_mutex_t
    libc.pthread_mutex_lock(mutex)
    libc.pthread_mutex_lock(mutex)  # a C deadlock; its futex wait resumes after any signal

def app(environ, start_response):
    {"/python": stuck_in_python, "/c": stuck_in_c_holding_the_gil}.get(environ["PATH_INFO"], id)()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok\n"]
'''
GUNICORN_FUNCTIONS = {"/python": "stuck_in_python", "/c": "stuck_in_c_holding_the_gil"}

DATALOADER_PROGRAM = r'''
import json, os, sys, threading
from torch.utils.data import DataLoader, Dataset
from dataloader_timeout import capture_on_timeout

never = threading.Event()

class Items(Dataset):
    def __len__(self):
        return 8
    def __getitem__(self, index):
        if index == 1:
            self.item_blocks_forever()
        return index
    def item_blocks_forever(self):
        name = sys._getframe().f_code.co_name  # ground truth, before it blocks
        with open(os.path.join(sys.argv[1], "%s-%d" % (name, os.getpid())), "w") as out:
            out.write(name)
        never.wait()

result = {}
try:
    for batch in capture_on_timeout(DataLoader(Items(), num_workers=2, timeout=3)):
        pass
except RuntimeError as error:
    result = {"type": type(error).__name__, "message": str(error),
              "cause": repr(error.__cause__), "cause_type": type(error.__cause__).__name__}
with open(sys.argv[2], "w") as out:
    json.dump(result, out)
'''

SLURM_PROGRAM = r'''
import json, os, sys, threading

def task_runs_into_the_time_limit():
    sitecustomize = sys.modules.get("sitecustomize")
    with open(os.path.join(sys.argv[1], "%d.json" % os.getpid()), "w") as out:
        json.dump({"function": sys._getframe().f_code.co_name,
                   "sitecustomize": getattr(sitecustomize, "__file__", None),
                   "pythonpath": os.environ.get("PYTHONPATH", "")}, out)
    threading.Event().wait()

task_runs_into_the_time_limit()
'''


def write(path, text):
    with open(path, "w") as out:
        out.write(text)
    os.chmod(path, 0o644)  # readable by nobody too


def functions_in(path_or_output):
    """The functions of every frame of a `coreanalyze --json` document (a file, or bytes)."""
    try:
        if isinstance(path_or_output, bytes):
            return test_collect.functions_in(json.loads(path_or_output))
        return test_collect.functions_in(test_collect.load_json(path_or_output))
    except ValueError:
        return set()


def check_capture(coreanalyze, capture_dir, wants, label):
    """Problems with a capture directory: for each {pid: function}, DIR/NODE/PID.json naming the
    function and DIR/NODE/PID.snapshot.core whose own analysis names it; DIR/triage.txt naming
    every function."""
    problems = []
    for pid, function in sorted(wants.items()):
        documents = glob.glob(os.path.join(capture_dir, "*", "%d.json" % pid))
        if not documents:
            problems.append("%s: no %d.json in %s: %s" % (label, pid, capture_dir, listing(capture_dir)))
        elif function not in functions_in(documents[0]):
            problems.append("%s: %s does not name %s: %s" % (
                label, documents[0], function, sorted(functions_in(documents[0]))))
        cores = glob.glob(os.path.join(capture_dir, "*", "%d.snapshot.core" % pid))
        if not cores:
            problems.append("%s: no %d.snapshot.core in %s" % (label, pid, capture_dir))
            continue
        result = subprocess.run([coreanalyze, cores[0], "--json"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, timeout=120)
        if result.returncode != 0 or function not in functions_in(result.stdout):
            problems.append("%s: coreanalyze %s: exit %d, %s not in it: %s" % (
                label, cores[0], result.returncode, function, result.stderr.decode(errors="replace")))
    verdict = test_collect.read_text(os.path.join(capture_dir, "triage.txt"))
    if not verdict.strip():
        problems.append("%s: no triage.txt, or empty, in %s: %s" % (label, capture_dir, listing(capture_dir)))
    for function in set(wants.values()):
        if verdict.strip() and function not in verdict:
            problems.append("%s: triage.txt does not name %s:\n%s" % (label, function, verdict))
    return problems


def listing(directory):
    found = sorted(os.path.relpath(os.path.join(top, name), directory)
                   for top, _, names in os.walk(directory) for name in names)
    return found or "(nothing)"


def ground_truth(directory):
    """{pid: function} of the files NAME-PID the hung programs wrote."""
    found = {}
    for path in glob.glob(os.path.join(directory, "*-*")):
        name, pid = os.path.basename(path).rsplit("-", 1)
        found[int(pid)] = name
    return found


def wait_for(condition, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise RuntimeError("%s: not within %d s" % (what, seconds))


def kill_session(process):
    """The process and its process group (start_new_session=True), then wait for it and for the
    group's other members to be gone (workers killed with it exit a moment later)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    process.wait()
    deadline = time.time() + 10
    while time.time() < deadline and any(group_of(pid) == process.pid
                                         for pid in test_collect_slurm.all_pids()):
        time.sleep(0.1)


def group_of(pid):
    """The process group of a live process (None for a zombie or a process gone)."""
    text = test_collect.read_text("/proc/%d/stat" % pid)
    fields = text[text.rindex(")") + 2:].split() if text else []
    return int(fields[2]) if fields and fields[0] != "Z" else None


def kill_leftovers(workdir):
    """Kill whatever still names `workdir` on its command line (a collector a recipe started in a
    session of its own, a job's task) and return their pids: none should be left."""
    left = [pid for pid in test_collect_slurm.all_pids() if pid != os.getpid() and alive(pid)
            and workdir.encode() in test_collect_slurm.cmdline_of(pid)]
    named = ["%d (%s)" % (pid, test_collect_slurm.cmdline_of(pid).replace(b"\0", b" ")
                          .decode(errors="replace")[:200]) for pid in left]
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return named


def alive(pid):
    return test_collect.state_of(pid) not in (None, "Z")


# --- gunicorn -------------------------------------------------------------------------------

def gunicorn_missing():
    if not os.path.exists(PYTHON):
        return "Debian's python3 is not installed"
    result = subprocess.run([PYTHON, "-c", "import gunicorn"], stderr=subprocess.PIPE)
    return "Debian's gunicorn is not installed (apt-get install gunicorn)" if result.returncode else None


def gunicorn_case(results, coreanalyze, workdir, as_nobody):
    user = "nobody" if as_nobody else pwd.getpwuid(os.geteuid()).pw_name
    label = "gunicorn --timeout 3 --workers 2, as %s" % user
    why_not = gunicorn_missing()
    prefix, bin_dir = [], None
    if not why_not and as_nobody:
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            why_not = "needs root and setpriv (util-linux) to run gunicorn as nobody"
        else:
            os.chmod(workdir, 0o755)
            why_not = test_collect.closed_to_others(workdir)
        if not why_not:  # nobody runs a copy (the clone may be closed to other users)
            coreanalyze, bin_dir, why_not = test_collect.copy_for_another_user(coreanalyze)
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if why_not:
        results.report("SKIP", label, [why_not])
        return
    case_dir = tempfile.mkdtemp(prefix="gunicorn-", dir=workdir)
    arbiter, port, log_path = start_gunicorn(prefix, coreanalyze, case_dir)
    ground, captures = os.path.join(case_dir, "ground"), os.path.join(case_dir, "captures")
    started = time.time()
    try:
        wait_for(lambda: len(workers_of(arbiter.pid)) == 2 or arbiter.poll() is not None, WAIT,
                 "2 gunicorn workers")
        if arbiter.poll() is not None:
            raise RuntimeError("gunicorn exited (%d)" % arbiter.returncode)
        for path in GUNICORN_FUNCTIONS:
            threading.Thread(target=request, args=("http://127.0.0.1:%d%s" % (port, path),),
                             daemon=True).start()
        hung = wait_for(lambda: len(ground_truth(ground)) == 2 and ground_truth(ground), WAIT,
                        "both requests to block (ground truth in %s)" % ground)
        problems = []
        for pid, function in sorted(hung.items(), key=lambda item: item[1]):
            problems += check_gunicorn_worker(coreanalyze, arbiter.pid, captures, log_path, pid,
                                              function, as_nobody)
        results.check("%s: 2 hung workers (in Python; in C holding the GIL) captured before the "
                      "arbiter's kill, replaced (%.1f s)" % (label, time.time() - started), problems)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        results.check(label, [str(error), "gunicorn's log:\n" + test_collect.output_tail(log_path, 3000)])
    finally:
        kill_session(arbiter)
        left = kill_leftovers(case_dir)
        if left:
            results.check("%s: nothing left running" % label, ["left running: %s" % left])
        if bin_dir:
            shutil.rmtree(bin_dir, ignore_errors=True)


def start_gunicorn(prefix, coreanalyze, case_dir):
    """Debian's gunicorn with a copy of the recipe's config (another user may read it) and the
    test app, in a session of its own: (the arbiter's Popen, its port, its log's path)."""
    os.chmod(case_dir, 0o755)
    for name in ("ground", "captures"):
        os.makedirs(os.path.join(case_dir, name))
        os.chmod(os.path.join(case_dir, name), 0o777)
    write(os.path.join(case_dir, "app.py"), GUNICORN_APP)
    config = os.path.join(case_dir, "gunicorn.conf.py")
    shutil.copy(os.path.join(RECIPES, "gunicorn.conf.py"), config)
    os.chmod(config, 0o644)
    port = test_collect.free_port()
    argv = prefix + [PYTHON, "-m", "gunicorn", "-c", config, "--timeout", "3", "--workers", "2",
                     "-b", "127.0.0.1:%d" % port, "--chdir", case_dir, "app:app"]
    environment = dict(os.environ, GROUND_DIR=os.path.join(case_dir, "ground"),
                       HANGPY_COREANALYZE=coreanalyze, HANGPY_CAPTURE_TIMEOUT="30",
                       HANGPY_CAPTURE_DIR=os.path.join(case_dir, "captures"))
    log_path = os.path.join(case_dir, "gunicorn.log")
    with open(log_path, "wb") as log:
        arbiter = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=environment, start_new_session=True, cwd=case_dir)
    return arbiter, port, log_path


def check_gunicorn_worker(coreanalyze, arbiter, captures, log_path, pid, function, as_nobody):
    """Problems with one hung worker: the arbiter must capture it, then kill it (SIGABRT, then
    SIGKILL), then boot another."""
    def captured_and_replaced():
        found = glob.glob(os.path.join(captures, "worker-%d-*" % pid, "triage.txt"))
        return found and not alive(pid) and len(workers_of(arbiter)) == 2 and os.path.dirname(found[0])
    try:
        capture_dir = wait_for(captured_and_replaced, WAIT,
                               "worker %d (%s) captured, killed and replaced" % (pid, function))
    except RuntimeError as error:
        return ["%s; gunicorn's log:\n%s" % (error, test_collect.output_tail(log_path, 3000))]
    problems = check_capture(coreanalyze, capture_dir, {pid: function}, function)
    # gunicorn's escalation unchanged: the worker in Python handles the SIGABRT and exits (its
    # worker_abort runs); the one in C cannot, and the SIGKILL of the next pass ends it.
    want = ("Worker exiting (pid: %d)" % pid if function == "stuck_in_python"
            else "Worker with pid %d was terminated due to signal 9" % pid)
    if want not in test_collect.read_text(log_path):
        problems.append("%s: no %r in gunicorn's log:\n%s" % (function, want,
                                                              test_collect.output_tail(log_path, 3000)))
    owner = os.stat(capture_dir).st_uid
    if as_nobody and owner != 65534:
        problems.append("%s was not written by nobody (uid %d)" % (capture_dir, owner))
    return problems


def workers_of(arbiter):
    return [pid for pid in children(arbiter) if alive(pid)]


def children(pid):
    return [child for child, parent in parents().items() if parent == pid]


def parents():
    """{pid: ppid} from /proc."""
    found = {}
    for parent, pids in test_collect.proc_children().items():
        for pid in pids:
            found[pid] = parent
    return found


def request(url):
    try:
        urllib.request.urlopen(url, timeout=WAIT).read()
    except OSError:
        pass  # the worker hangs, then is killed: no answer comes


# --- DataLoader -----------------------------------------------------------------------------

def torch_missing():
    if not os.path.exists(PYTHON):
        return "Debian's python3 is not installed"
    result = subprocess.run([PYTHON, "-c", "import torch.utils.data"], stderr=subprocess.PIPE)
    return "Debian's python3-torch is not installed (scripts/install-deps)" if result.returncode else None


def dataloader_case(results, coreanalyze, workdir):
    label = "DataLoader(num_workers=2, timeout=3), one worker stuck"
    why_not = torch_missing()
    if why_not:
        results.report("SKIP", label, [why_not])
        return
    case_dir = tempfile.mkdtemp(prefix="dataloader-", dir=workdir)
    ground, captures = os.path.join(case_dir, "ground"), os.path.join(case_dir, "captures")
    os.makedirs(ground)
    program, result_path = os.path.join(case_dir, "program.py"), os.path.join(case_dir, "result.json")
    write(program, DATALOADER_PROGRAM)
    environment = dict(test_collect.torch_environment(), PYTHONPATH=RECIPES, PYTHONDONTWRITEBYTECODE="1",
                       HANGPY_COREANALYZE=coreanalyze, HANGPY_CAPTURE_DIR=captures)
    log_path = os.path.join(case_dir, "program.log")
    started = time.time()
    with open(log_path, "wb") as log:
        process = subprocess.Popen([PYTHON, program, ground, result_path], stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=subprocess.STDOUT, env=environment,
                                   start_new_session=True)
    try:
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            raise RuntimeError("the program did not end in 120 s: %s" % test_collect.output_tail(log_path))
        seconds = time.time() - started
        hung = ground_truth(ground)
        if not os.path.exists(result_path) or len(hung) != 1:
            raise RuntimeError("exit %d, ground truth %s; its output:\n%s" % (
                process.returncode, hung, test_collect.output_tail(log_path)))
        (pid, function), = hung.items()
        result = test_collect.load_json(result_path)
        problems = []
        if result.get("type") != "DataLoaderTimeout" or result.get("cause_type") != "RuntimeError" \
                or "DataLoader timed out after 3 seconds" not in result.get("cause", ""):
            problems.append("want DataLoaderTimeout from torch's timeout RuntimeError: %s" % result)
        for want in (function, "PID(s) %d" % pid, "DataLoader worker"):
            if want not in result.get("message", ""):
                problems.append("the error's message lacks %r:\n%s" % (want, result.get("message")))
        capture_dirs = glob.glob(os.path.join(captures, "dataloader-*"))
        if len(capture_dirs) != 1:
            problems.append("want one capture directory in %s: %s" % (captures, listing(captures)))
        else:
            problems += check_capture(coreanalyze, capture_dirs[0], {pid: function}, "capture")
        results.check("%s: error names worker %d in %s, capture kept (%.1f s with torch's import)"
                      % (label, pid, function, seconds), problems)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        results.check(label, [str(error)])
    finally:
        kill_session(process)
        left = kill_leftovers(case_dir)
        if left:
            results.check("%s: nothing left running" % label, ["left running: %s" % left])


# --- SLURM ----------------------------------------------------------------------------------

def slurm_missing():
    missing = [tool for tool in ("slurmctld", "slurmd", "sbatch", "srun", "squeue", "scancel")
               if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None]
    if missing:
        return "%s not installed (scripts/install-deps --slurm)" % ", ".join(missing)
    if os.geteuid() != 0:
        return "slurmd must run as root to launch the test job's tasks"
    if not os.path.exists(PYTHON):
        return "Debian's python3 is not installed"
    return None


def start_slurm(workdir):
    """(the started SLURMs, None) or (them, why not), as test_collect_slurm.py starts them: again
    with CgroupPlugin=cgroup/v1 where slurmd cannot autodetect a cgroup file system."""
    slurm = test_collect_slurm.Slurm(workdir)
    slurms = [slurm]
    why_not = slurm.start()
    if why_not and any(test_collect_slurm.CGROUP_FAILURE in line for line in why_not):
        slurm.stop()
        slurm = test_collect_slurm.Slurm(workdir, "slurm-cgroup-v1", cgroup_plugin="cgroup/v1")
        slurms.append(slurm)
        again = slurm.start()
        why_not = None if again is None else why_not + again
    return slurms, why_not


def slurm_case(results, coreanalyze, workdir):
    label = "SLURM --time=1 --signal=B:USR1@50, slurm-time-limit.sbatch"
    why_not = slurm_missing()
    if why_not:
        results.report("SKIP", label, [why_not])
        return
    case_dir = tempfile.mkdtemp(prefix="slurm-", dir=workdir)
    os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    slurms, why_not = start_slurm(case_dir)
    jobs = []
    try:
        if why_not:
            results.report("SKIP", "%s: %s" % (label, why_not[0]), why_not[1:])
            return
        slurm = slurms[-1]
        program = os.path.join(case_dir, "program.py")
        write(program, SLURM_PROGRAM)
        # One task each: on 2 CPUs both jobs run, and wait for their signal, at once.
        for scope, extra in (("local", {}), ("srun", {"HANGPY_TRACEABLE": "1"})):
            job_dir = os.path.join(case_dir, scope)
            os.makedirs(os.path.join(job_dir, "ground"))
            environment = dict(slurm.environment, HANGPY_COREANALYZE=coreanalyze,
                               HANGPY_PYTHON=PYTHON, HANGPY_SCOPE=scope,
                               HANGPY_CAPTURE_DIR=os.path.join(job_dir, "capture"), **extra)
            submitted = subprocess.run(
                ["sbatch", "--parsable", "-n", "1", "--time=1", "--signal=B:USR1@50", "-o",
                 os.path.join(job_dir, "job.out"), os.path.join(RECIPES, "slurm-time-limit.sbatch"),
                 program, os.path.join(job_dir, "ground")],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment, timeout=60)
            if submitted.returncode != 0:
                raise RuntimeError("sbatch: exit %d: %s" % (submitted.returncode,
                                                            submitted.stderr.decode(errors="replace")))
            jobs.append((scope, submitted.stdout.decode().strip().split(";")[0], job_dir, time.time()))
        for scope, job_id, job_dir, submitted_at in jobs:
            traceable = ", HANGPY_TRACEABLE=1" if scope == "srun" else ""
            results.check("%s, HANGPY_SCOPE=%s%s" % (label, scope, traceable),
                          check_slurm_job(coreanalyze, slurm, scope, job_id, job_dir, submitted_at))
            cancel_and_wait(slurm, [job_id])  # on 1 CPU, the next job starts only now
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        results.check(label, [str(error)])
    finally:
        job_ids = [job_id for _, job_id, _, _ in jobs]
        if job_ids:
            cancel_and_wait(slurms[-1], job_ids)
        for job_id in job_ids:
            # What is still there is killed (every slurmstepd of this SLURM: all jobs ended first).
            test_collect_slurm.end_job(slurms[-1], job_id, case_dir)
        for slurm in slurms:
            slurm.stop()
        time.sleep(0.5)
        left = kill_leftovers(case_dir)
        if left:
            results.check("SLURM: nothing of the test jobs left after SLURM stopped",
                          ["left running: %s" % left])


def cancel_and_wait(slurm, job_ids):
    """scancel, then up to 20 s for the jobs' Python processes and the jobs to be gone."""
    slurm.run(["scancel"] + job_ids, check=False)
    deadline = time.time() + 20
    while time.time() < deadline and (
            any(test_collect_slurm.job_python_processes(job_id) for job_id in job_ids)
            or slurm.run(["squeue", "-h", "-j", ",".join(job_ids)], check=False).strip()):
        time.sleep(0.2)


def check_slurm_job(coreanalyze, slurm, scope, job_id, job_dir, submitted_at):
    out_path = os.path.join(job_dir, "job.out")
    capture_dir = os.path.join(job_dir, "capture", "hangpy-%s" % job_id)
    # USR1 comes 10 to 40 s after the job starts; a job left pending (1 CPU) starts only now.
    seconds = max(SLURM_WAIT - (time.time() - submitted_at), 60)
    try:
        wait_for(lambda: "hangpy: collect exit code" in test_collect.read_text(out_path), seconds,
                 "job %s's capture (USR1 from SLURM)" % job_id)
    except RuntimeError as error:
        return ["%s; squeue: %s; job.out:\n%s" % (error, slurm.run(["squeue"], check=False),
                                                  test_collect.read_text(out_path))]
    print("     (job %s, %s: captured %.1f s after sbatch)" % (job_id, scope, time.time() - submitted_at))
    tasks = dict((int(os.path.basename(path)[:-len(".json")]), test_collect.load_json(path))
                 for path in glob.glob(os.path.join(job_dir, "ground", "*.json")))
    problems = [] if len(tasks) == 1 else ["want the ground truth of one task: %s" % tasks]
    problems += check_capture(coreanalyze, capture_dir,
                              dict((pid, task["function"]) for pid, task in tasks.items()), "job %s" % job_id)
    if "hangpy: collect exit code 0" not in test_collect.read_text(out_path):
        problems.append("collect did not end with exit code 0: %s" % test_collect.read_text(out_path))
    for task in tasks.values():
        shim = "hangpy-traceable" in task["pythonpath"]
        if shim != (scope == "srun"):
            problems.append("the sitecustomize shim on PYTHONPATH: %s (want it only with HANGPY_TRACEABLE=1)"
                            % task)
        if shim and task["sitecustomize"] != own_sitecustomize():
            problems.append("the shim did not then run Python's own sitecustomize (%s): %s"
                            % (own_sitecustomize(), task))
    return problems


def own_sitecustomize():
    """The sitecustomize module Debian's python3 loads (the one the recipe's shim must not lose)."""
    result = subprocess.run([PYTHON, "-c", "import sitecustomize; print(sitecustomize.__file__)"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return result.stdout.decode().strip() or None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--only", choices=("gunicorn", "dataloader", "slurm"), help="run only this case")
    args = parser.parse_args()
    coreanalyze = os.path.abspath(args.coreanalyze)
    # ctest's timeout sends SIGTERM: unwind, so that every `finally` kills what it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM: stopped"))
    results = Results()
    workdir = tempfile.mkdtemp(prefix="hangpy-recipes-")
    started = time.time()
    try:
        cases = (("gunicorn", lambda: gunicorn_case(results, coreanalyze, workdir, False)),
                 ("gunicorn", lambda: gunicorn_case(results, coreanalyze, workdir, True)),
                 ("dataloader", lambda: dataloader_case(results, coreanalyze, workdir)),
                 ("slurm", lambda: slurm_case(results, coreanalyze, workdir)))
        for name, case in cases:
            if not args.only or args.only == name:
                case()
    finally:
        left = kill_leftovers(workdir)
        if left:
            results.check("nothing left running", ["left running: %s" % left])
        if args.keep:
            print("kept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print("     (%.1f s in all)" % (time.time() - started))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
