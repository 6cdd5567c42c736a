#!/usr/bin/python3
"""gdb test: one rule for which threads get native stacks (analysis::vague_threads), in gdb as in
coreanalyze. A real torch DDP job with uneven batches (tests/programs/job_ddp_uneven.py under
torch.multiprocessing.spawn, gloo): each rank's gcore is read by `coreanalyze CORE` and by gdb's
py-threads (gdb's own unwinder), and the main thread's "Blocked on:" and "Run by:" lines must be
the same in both: the odd rank in torch.distributed.barrier, run by a gloo worker that waits for a
peer (which needs the native stacks of the threads that run no Python), the others in DDP's
gradient all_reduce in backward() (which needs the main thread's own native frames).

  test_gdb_collective.py --hangpy-init build/gdbplugin/hangpy.gdb --coreanalyze build/bin/coreanalyze

Exit status: 0 passed, 1 failed, 77 gdb, the module or torch is missing.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)
import cores  # noqa: E402
import gdb_session  # noqa: E402
import test_jobs  # noqa: E402
from results import SKIP, Results  # noqa: E402

WAIT_LINES = ("Blocked on:", "Run by:")


def main_thread_waits(lines):
    """The "Blocked on:" and "Run by:" lines of the main thread's block (coreanalyze's report or
    gdb's py-threads), stripped."""
    waits = []
    inside = False
    for line in lines:
        if '"MainThread"' in line:
            inside = True
            continue
        if inside and line.strip().startswith(WAIT_LINES):
            waits.append(line.strip())
        elif inside and waits and not line.startswith("    "):
            break
    return waits


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hangpy-init", required=True)
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    problem = gdb_session.environment_problem(args.hangpy_init)
    reason = problem or test_jobs.torch_missing_reason()
    if reason:
        print("SKIP: %s" % reason)
        return SKIP
    results = Results()
    workdir = tempfile.mkdtemp(prefix="hangpy-gdb-collective-", dir="/var/tmp")
    job = test_jobs.Job([test_jobs.PYTHON, os.path.join(cores.PROGRAMS, "job_ddp_uneven.py")], workdir, "ddp")
    try:
        ranks = job.wait_ready(test_jobs.DDP_RANKS)
        time.sleep(test_jobs.SETTLE_SECONDS)
        taken = {}
        for rank, pid in sorted(ranks.items()):
            prefix = os.path.join(workdir, rank)
            subprocess.run(["gcore", "-o", prefix, str(pid)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=300, check=True)
            taken[rank] = "%s.%d" % (prefix, pid)
        job.kill()
        odd = "rank%d" % test_jobs.DDP_ODD
        options = gdb_session.GdbOptions(hangpy_init=args.hangpy_init)
        for rank, core in sorted(taken.items()):
            report = subprocess.run([args.coreanalyze, core], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    timeout=300).stdout.decode("utf-8", "replace").splitlines()
            gdb = gdb_session.run_gdb(options, [test_jobs.PYTHON, core], [("threads", "py-threads")])
            want, got = main_thread_waits(report), main_thread_waits(gdb.output("threads"))
            problems = []
            if not want:
                problems.append("coreanalyze names no wait of the main thread: %s" % report[:12])
            elif want != got:
                problems.append("coreanalyze: %s\n      gdb:         %s" % (want, got))
            expected = ("torch.distributed.barrier" if rank == odd else "all_reduce in backward()")
            if not any(expected in line for line in got):
                problems.append("gdb's main thread is not blocked in %s: %s" % (expected, got))
            if rank == odd and not any(line.startswith("Run by:") and "worker" in line for line in got):
                problems.append("gdb names no backend worker running the barrier: %s" % got)
            results.check("%s: the main thread's wait, in gdb as in coreanalyze" % rank, problems)
    except (RuntimeError, subprocess.TimeoutExpired, subprocess.CalledProcessError, KeyError) as error:
        results.check("the DDP job", ["%s: %s" % (type(error).__name__, error)])
    finally:
        job.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
