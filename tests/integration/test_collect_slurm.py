#!/usr/bin/python3
"""Integration test: coreanalyze collect --srun JOBID against a real SLURM (Debian's slurm-wlm):
a single-node slurmctld + slurmd on loopback, started here in a temporary directory with
AuthType=auth/none (no munge daemon needed), a batch job running tests/programs/collect_job.py
(a launcher, its ranks, a spawn worker, a resource_tracker) and a two-task job step beside it.
The collector enters the job's allocation with srun --overlap (the job holds every CPU) and
must gather a JSON file per Python process of the job, each showing the function that process
said it blocks in, under DIR/localhost, with DIR/manifest.json naming the node.

Skips (exit 77, saying why) when slurm-wlm is not installed (scripts/install-deps --slurm), when
not root (slurmd launches the job's tasks), or when the daemons do not come up: which one ended
or what was not ready, and the daemons' own error lines, each in full. Where slurmd cannot
initialize its cgroup plugin (no cgroup file system, as in a chroot; its autodetection wants one
though this configuration uses no cgroup), the daemons start again with CgroupPlugin=cgroup/v1
named in a cgroup.conf, which needs none.
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
import test_collect  # noqa: E402
from results import SKIP, Results  # noqa: E402

SLURM_TIMEOUT = 30
# slurmd's line when its cgroup plugin does not start (autodetection, no cgroup file system).
CGROUP_FAILURE = "Unable to initialize cgroup plugin"
# Error lines of slurmctld on every start of this test's fresh configuration, causes of nothing.
USUAL_ERRORS = ("Could not open node state file", "Could not open job state file",
                "Could not open reservation state file", "Could not open trigger state file",
                "NOTE: Trying backup state save file", "Configured MailProg is invalid",
                "mpi/pmix", "MPI: Cannot create context")
CONFIG = """\
ClusterName=hangpytest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
PlugStackConfig={dir}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=100 State=UNKNOWN
PartitionName=hangpy Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""
BATCH = """\
#!/bin/sh
srun --ntasks=2 --export=ALL,RANK=0 {python} {job} {ready} 3 --rank 0 &
{python} {job} {ready} 3 &
wait
"""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tail(path, lines=5):
    try:
        with open(path, errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError:
        return "(no %s)" % path


def read_lines(path):
    try:
        with open(path, errors="replace") as handle:
            return handle.read().splitlines()
    except OSError:
        return []


def daemon_and_message(line, daemon):
    """(the daemon, the message) of a line of daemons.out ("slurmd: error: ...", daemon None) or
    of a daemon's log ("[time stamp] error: ...")."""
    line = line.strip()
    if line.startswith("[") and "] " in line:
        line = line[line.index("] ") + 2:]
    for name in ("slurmctld", "slurmd"):
        if daemon is None and line.startswith(name + ": "):
            return name, line[len(name) + 2:]
    return daemon, line


class Slurm(object):
    """slurmctld and slurmd in the foreground, as our children, on free loopback ports."""

    def __init__(self, workdir, name="slurm", cgroup_plugin=None):
        self.dir = os.path.join(workdir, name)
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(self.dir, sub))
        open(os.path.join(self.dir, "plugstack.conf"), "w").close()
        self.cgroup_plugin = cgroup_plugin
        if cgroup_plugin:  # read from beside slurm.conf
            with open(os.path.join(self.dir, "cgroup.conf"), "w") as out:
                out.write("CgroupPlugin=%s\n" % cgroup_plugin)
        self.conf = os.path.join(self.dir, "slurm.conf")
        with open(self.conf, "w") as out:
            out.write(CONFIG.format(ctld_port=free_port(), slurmd_port=free_port(), dir=self.dir,
                                    cpus=os.cpu_count() or 1))
        self.environment = dict(os.environ, SLURM_CONF=self.conf)
        self.daemons = []

    def start(self):
        """None when both are up and the node is idle, else why not: a headline (which daemon
        ended, or what was not ready in time), then the daemons' own error lines."""
        with open(os.path.join(self.dir, "daemons.out"), "w") as log:
            self.daemons.append(("slurmctld", subprocess.Popen(
                ["slurmctld", "-D", "-i", "-f", self.conf], stdout=log, stderr=log,
                env=self.environment)))
            time.sleep(0.5)
            self.daemons.append(("slurmd", subprocess.Popen(
                ["slurmd", "-D", "-N", "localhost", "-f", self.conf], stdout=log, stderr=log,
                env=self.environment)))
        deadline = time.time() + SLURM_TIMEOUT
        headline, state = None, ""
        while time.time() < deadline:
            ended = ["%s (exit code %d)" % (name, daemon.returncode)
                     for name, daemon in self.daemons if daemon.poll() is not None]
            if ended:
                headline = "%s ended before the node was up" % " and ".join(ended)
                break
            state = self.run(["sinfo", "-h", "-o", "%t"], check=False).strip()
            if state == "idle":
                return None
            time.sleep(0.5)
        if headline is None:
            headline = ("slurmctld/slurmd did not come up in %d s (sinfo says the node is %r)"
                        % (SLURM_TIMEOUT, state))
        if self.cgroup_plugin:
            headline += " (CgroupPlugin=%s)" % self.cgroup_plugin
        ended = [name for name, daemon in self.daemons if daemon.poll() is not None]
        return [headline] + self.error_lines(ended or ["slurmctld", "slurmd"])

    def error_lines(self, daemons):
        """Each error or fatal line of `daemons` once (their output, then their logs), in full,
        but those of every start; without any, the end of each file."""
        found, seen = [], set()
        files = [(os.path.join(self.dir, name), daemon) for name, daemon in
                 (("daemons.out", None), ("slurmctld.log", "slurmctld"), ("slurmd.log", "slurmd"))]
        for path, of in files:
            for line in read_lines(path):
                daemon, message = daemon_and_message(line, of)
                lowered = message.lower()
                if (daemon in daemons and ("error" in lowered or "fatal" in lowered)
                        and message not in seen
                        and not any(usual in message for usual in USUAL_ERRORS)):
                    seen.add(message)
                    found.append("%s: %s" % (daemon, message))
        if found:
            return found
        return ["%s ends: %s" % (os.path.basename(path), tail(path).strip() or "(empty)")
                for path, _ in files]

    def run(self, argv, check=True):
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=self.environment, timeout=SLURM_TIMEOUT)
        if check and result.returncode != 0:
            raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), result.returncode,
                                                    result.stderr.decode(errors="replace")))
        return result.stdout.decode(errors="replace")

    def stop(self):
        for _, daemon in reversed(self.daemons):
            daemon.terminate()
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        self.daemons = []


def job_python_processes(job_id):
    """pids of the Python processes whose environment holds SLURM_JOB_ID=job_id."""
    found = []
    marker = ("SLURM_JOB_ID=%s\0" % job_id).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as handle:
                environ = handle.read()
            exe = os.readlink("/proc/%s/exe" % entry)
        except OSError:
            continue
        if marker in environ and os.path.basename(exe).startswith("python"):
            found.append(int(entry))
    return found


def srun_case(coreanalyze, python, workdir, slurm):
    ready = os.path.join(workdir, "ready")
    os.makedirs(ready)
    script = os.path.join(workdir, "job.sh")
    with open(script, "w") as out:
        out.write(BATCH.format(python=python, job=test_collect.JOB, ready=ready))
    # Every CPU of the node, so that the collector's step has to overlap the job's.
    job_id = slurm.run(["sbatch", "--parsable", "-n", str(os.cpu_count() or 1), "-o",
                        os.path.join(workdir, "job.out"), script]).strip().split(";")[0]
    try:
        deadline = time.time() + test_collect.START_TIMEOUT
        want = len(test_collect.FUNCTIONS) + 2  # the launcher's tree, and the step's two tasks
        while len(glob.glob(os.path.join(ready, "*.ready"))) < want:
            if time.time() > deadline:
                raise RuntimeError("the job's processes did not start: %s\n%s" % (
                    slurm.run(["squeue"], check=False), tail(os.path.join(workdir, "job.out"))))
            time.sleep(0.2)
        roles = {}
        for path in glob.glob(os.path.join(ready, "*.ready")):
            role, pid = os.path.basename(path)[:-len(".ready")].rsplit("-", 1)
            roles[int(pid)] = role
        python = dict((pid, roles.get(pid, "other")) for pid in job_python_processes(job_id))
        problems = []
        if not set(roles) <= set(python):
            problems.append("ready processes %s not all in the job's %s" % (sorted(roles), sorted(python)))
        timings = []
        for variant, extra in (("shared", []), ("local", ["--local-dir", os.path.join(workdir, "local")])):
            out_dir = os.path.join(workdir, "out-" + variant)
            started = time.time()
            result = subprocess.run([coreanalyze, "collect", "--srun", job_id, "-o", out_dir,
                                     "--no-triage"] + extra,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    timeout=test_collect.RUN_TIMEOUT, env=slurm.environment)
            timings.append(time.time() - started)
            err = result.stderr.decode(errors="replace")
            if result.returncode != 0:
                problems.append("%s: exit code %d: %s" % (variant, result.returncode, err))
            problems += test_collect.check_node_dir(os.path.join(out_dir, "localhost"), python, [],
                                                    [], "%s localhost" % variant)
            top_path = os.path.join(out_dir, "manifest.json")
            top = json.load(open(top_path)) if os.path.exists(top_path) else {"nodes": {}, "missing_nodes": []}
            if list(top["nodes"]) != ["localhost"] or top["missing_nodes"]:
                problems.append("%s: top manifest: nodes %s, missing %s" % (
                    variant, list(top["nodes"]), top["missing_nodes"]))
            if variant == "local" and not glob.glob(os.path.join(workdir, "local", "localhost", "*.json")):
                problems.append("--local-dir: nothing written on the node's own directory")
            if glob.glob(os.path.join(out_dir, ".*.tar")):
                problems.append("%s: tar files left in %s" % (variant, out_dir))
        problems += watch_problems(coreanalyze, job_id, workdir, slurm, python)
        problems += test_collect.not_stopped(list(python))
        seconds = max(timings)
        return problems, seconds, len(python)
    finally:
        end_job(slurm, job_id, workdir)


def watch_problems(coreanalyze, job_id, workdir, slurm, python):
    """coreanalyze watch --srun JOBID: each look a collect through srun on every node of the job;
    the job (hung from the start) is caught after --after, and the capture holds every Python
    process's JSON and the verdict."""
    out_dir = os.path.join(workdir, "out-watch")
    result = subprocess.run([coreanalyze, "watch", "--srun", job_id, "--interval", "1", "--after", "3",
                             "--for", "120", "--cores", "none", "-o", out_dir],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=test_collect.RUN_TIMEOUT, env=slurm.environment)
    err = result.stderr.decode(errors="replace")
    if result.returncode != 20:
        return ["watch --srun: exit code %d, not 20 (hang caught): %s" % (result.returncode, err[-3000:])]
    problems = test_collect.check_node_dir(os.path.join(out_dir, "localhost"), python, [], [],
                                           "watch --srun localhost")
    if not os.path.getsize(os.path.join(out_dir, "triage.txt")) if os.path.exists(
            os.path.join(out_dir, "triage.txt")) else True:
        problems.append("watch --srun: no verdict in triage.txt")
    return problems


def end_job(slurm, job_id, workdir):
    """scancel, then wait for slurmd to end the job's tasks before the daemons stop: a job still
    running when slurmd goes leaves its slurmstepd and Python processes behind (which later
    `collect --name` runs would pick up). What is left after the wait is killed."""
    slurm.run(["scancel", job_id], check=False)
    deadline = time.time() + 20
    while time.time() < deadline:
        if not job_python_processes(job_id) and not slurm.run(
                ["squeue", "-h", "-j", job_id], check=False).strip():
            break
        time.sleep(0.2)
    for pid in job_python_processes(job_id) + slurm_step_daemons(workdir):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def slurm_step_daemons(workdir):
    """pids of the slurmstepd processes of this test's SLURM (their environment names its
    slurm.conf under `workdir`)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as handle:
                if not handle.read().startswith(b"slurmstepd"):
                    continue
            with open("/proc/%s/environ" % entry, "rb") as handle:
                if workdir.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    missing = [tool for tool in ("slurmctld", "slurmd", "sbatch", "srun", "squeue", "scontrol")
               if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None]
    if missing:
        print("SKIP slurm: %s not installed (scripts/install-deps --slurm)" % ", ".join(missing))
        return SKIP
    if os.geteuid() != 0:
        print("SKIP slurm: slurmd must run as root to launch the test job's tasks")
        return SKIP
    installed = list(interpreters.each_installed(test_collect.NAMES, results))
    if not installed:
        return results.finish()
    name, interpreter = installed[0]
    workdir = tempfile.mkdtemp(prefix="hangpy-slurm-")
    os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    slurm = Slurm(workdir)
    slurms = [slurm]
    try:
        version = slurm.run(["sinfo", "--version"], check=False).strip()
        why_not = slurm.start()
        if why_not and any(CGROUP_FAILURE in line for line in why_not):
            # No cgroup file system (a chroot): slurmd's autodetection of the cgroup version fails,
            # though nothing here uses cgroups (proctrack/linuxproc, task/none). Name the plugin.
            slurm.stop()
            slurm = Slurm(workdir, "slurm-cgroup-v1", cgroup_plugin="cgroup/v1")
            slurms.append(slurm)
            again = slurm.start()
            why_not = None if again is None else why_not + again
        if why_not:
            results.report("SKIP", "slurm: " + why_not[0], why_not[1:])
        else:
            problems, seconds, count = srun_case(args.coreanalyze, interpreter.executable, workdir,
                                                 slurm)
            results.check("%s %s: collect --srun JOBID (srun --overlap; shared DIR and --local-dir) and "
                          "watch --srun JOBID, "
                          "%d Python processes, at most %.2f s%s"
                          % (name, version, count, seconds,
                             "; CgroupPlugin=%s, no cgroup file system here" % slurm.cgroup_plugin
                             if slurm.cgroup_plugin else ""), problems)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        results.check("slurm", [str(error)])
    finally:
        for started in slurms:
            started.stop()
        time.sleep(0.5)
        left = [pid for pid in all_pids() if workdir.encode() in cmdline_of(pid)]
        if left:
            results.check("no process of the test job left after SLURM stopped",
                          ["left running: %r" % sorted(left)])
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


def all_pids():
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def cmdline_of(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


if __name__ == "__main__":
    sys.exit(main())
