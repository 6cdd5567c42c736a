#!/usr/bin/python3
"""Integration test (issue 36): `coreanalyze collect --container ID` selects a container's
processes from the node by their cgroup. No container runtime runs here, so the test makes the
cgroup a runtime would (Docker's cgroupfs driver: memory:/docker/<64 hex digits>) and starts a
real hung job in it (tests/programs/job_pipe_cycle.py: a parent in Popen.wait, a child writing
the pipe), beside the same job outside it:

- `collect --container PREFIX` takes exactly the container's two processes, none of the other
  job's; each document's process.container says docker and the id; the triage names them
  "in docker <12 digits>" and states their cycle;
- `--container` with too few hex digits, or what no container's name can be, is a usage error
  (exit 2); a name no container has finds nothing (exit 3).

Exit status: 0 passed, 1 failed, 77 no cgroup v1 memory hierarchy this user may write to.
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
from results import Results, SKIP  # noqa: E402

CONTAINER_ID = "3f2a9c81d0e4" + "b5a6c7d8e9f00112233445566778899aabbccddeeff001122" + "abcd"
HIERARCHY = "/sys/fs/cgroup/memory"
PYTHON = "/usr/bin/python3"


def start_job(ready_dir, cgroup):
    """job_pipe_cycle.py, moved into `cgroup` (its cgroup.procs) before it starts its child."""
    os.makedirs(ready_dir)
    enter = "echo $$ > %s/cgroup.procs && " % cgroup if cgroup else ""
    return subprocess.Popen(["sh", "-c", enter + "exec %s %s %s" % (PYTHON, os.path.join(cores.PROGRAMS, "job_pipe_cycle.py"),
                                                                      ready_dir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def ready_pids(ready_dir, deadline):
    while time.time() < deadline:
        found = glob.glob(os.path.join(ready_dir, "*.ready"))
        if len(found) == 2:
            return dict((os.path.basename(p).rsplit("-", 1)[0], int(os.path.basename(p).rsplit("-", 1)[1].split(".")[0]))
                        for p in found)
        time.sleep(0.1)
    return None


def main():
    parser = __import__("argparse").ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    cgroup = os.path.join(HIERARCHY, "docker", CONTAINER_ID)
    made_parent = not os.path.isdir(os.path.dirname(cgroup))
    try:
        os.makedirs(cgroup, exist_ok=True)
    except OSError as error:
        print("SKIP no cgroup v1 memory hierarchy to make a container's cgroup in (%s): %s" % (HIERARCHY, error))
        return SKIP
    results = Results()
    workdir = tempfile.mkdtemp(prefix="hangpy-container-")
    jobs = []
    try:
        inside = start_job(os.path.join(workdir, "inside"), cgroup)
        outside = start_job(os.path.join(workdir, "outside"), None)
        jobs = [inside, outside]
        deadline = time.time() + 30
        in_pids = ready_pids(os.path.join(workdir, "inside"), deadline)
        out_pids = ready_pids(os.path.join(workdir, "outside"), deadline)
        if not in_pids or not out_pids:
            results.report("FAIL", "collect --container: the jobs never blocked")
            return results.finish()
        out_dir = os.path.join(workdir, "collected")
        result = subprocess.run([args.coreanalyze, "collect", "--container", CONTAINER_ID[:8], "-o", out_dir,
                                 "--node-name", "n"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        problems = [] if result.returncode == 0 else ["exit %d: %s" % (result.returncode, result.stderr[-400:])]
        taken = sorted(int(os.path.basename(p)[:-5]) for p in glob.glob(os.path.join(out_dir, "n", "*.json"))
                       if os.path.basename(p)[0].isdigit())
        if taken != sorted(in_pids.values()):
            problems.append("took %s, want the container's %s (not %s)" % (taken, sorted(in_pids.values()),
                                                                          sorted(out_pids.values())))
        for pid in taken:
            with open(os.path.join(out_dir, "n", "%d.json" % pid)) as stream:
                container = json.load(stream).get("process", {}).get("container") or {}
            if container.get("runtime") != "docker" or container.get("id") != CONTAINER_ID:
                problems.append("PID %d: process.container %r" % (pid, container))
        text = result.stdout.decode("utf-8", "replace")
        first = text.splitlines()[0] if text else ""
        for want in ("each waits for the other: ", "in docker %s)" % CONTAINER_ID[:12]):
            if want not in first:
                problems.append("the triage's first line %r lacks %r" % (first, want))
        results.check("collect --container %s: the container's job alone, named, its cycle" % CONTAINER_ID[:8], problems)
        for bad in ("../web-1", "3f2", "-web"):
            code = subprocess.run([args.coreanalyze, "collect", "--container=" + bad, "-o", os.path.join(workdir, "bad")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
            results.check("collect --container %s: a usage error" % bad, [] if code == 2 else ["exit %d" % code])
        # A name no runtime's records know: nothing to collect, said (exit 3).
        missing = subprocess.run([args.coreanalyze, "collect", "--container", "no-such-container-here", "-o",
                                  os.path.join(workdir, "none")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        problems = [] if missing.returncode == 3 else ["exit %d" % missing.returncode]
        if b"container no-such-container-here" not in missing.stderr:
            problems.append("no line names it: %r" % missing.stderr[-300:])
        results.check("collect --container NAME that no container has: exit 3, said", problems)
    finally:
        for job in jobs:
            try:
                os.killpg(job.pid, 9)
            except ProcessLookupError:
                pass
            job.wait()
        for _ in range(50):
            try:
                os.rmdir(cgroup)
                break
            except OSError:
                time.sleep(0.1)
        if made_parent:
            try:
                os.rmdir(os.path.dirname(cgroup))
            except OSError:
                pass
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
