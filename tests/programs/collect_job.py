"""A hung job for coreanalyze collect's tests, shaped like a torchrun launch: a launcher (Python)
whose ranks are Python processes with RANK/LOCAL_RANK/WORLD_SIZE in their environment; rank 1
also has a worker started with multiprocessing's "spawn" method (as DataLoader workers and
mp.spawn are), which brings multiprocessing's resource_tracker; the launcher also has a child that
runs no Python (sleep) and a zombie (a child that exited and was never waited for).

Every Python process of ours writes READY_DIR/ROLE-PID.ready once it is about to block in the
function its role names (launcher_waits_for_ranks, rank_waits_for_peers, odd_rank_is_elsewhere,
worker_loop), so that the test knows where each one is.

    collect_job.py READY_DIR RANKS            the launcher
    collect_job.py READY_DIR RANKS --rank N   one rank (the launcher starts them)
"""
import multiprocessing
import os
import subprocess
import sys
import time


def ready(ready_dir, role):
    path = os.path.join(ready_dir, "%s-%d.ready" % (role, os.getpid()))
    with open(path + ".tmp", "w") as out:
        out.write(role)
    os.rename(path + ".tmp", path)


def worker_loop(ready_dir):
    ready(ready_dir, "worker")
    while True:
        time.sleep(1)


def rank_waits_for_peers(ready_dir, rank):
    ready(ready_dir, "rank%d" % rank)
    while True:
        time.sleep(1)


def odd_rank_is_elsewhere(ready_dir, rank):
    context = multiprocessing.get_context("spawn")
    worker = context.Process(target=worker_loop, args=(ready_dir,))
    worker.start()
    ready(ready_dir, "rank%d" % rank)
    while True:
        time.sleep(1)


def launcher_waits_for_ranks(ready_dir):
    ready(ready_dir, "launcher")
    while True:
        time.sleep(1)


def main():
    ready_dir, ranks = sys.argv[1], int(sys.argv[2])
    if len(sys.argv) > 4 and sys.argv[3] == "--rank":
        rank = int(sys.argv[4])
        (odd_rank_is_elsewhere if rank == 1 else rank_waits_for_peers)(ready_dir, rank)
        return
    children = []
    for rank in range(ranks):
        environment = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(ranks))
        children.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), ready_dir,
                                          str(ranks), "--rank", str(rank)], env=environment))
    children.append(subprocess.Popen(["sleep", "600"]))
    if os.fork() == 0:
        os._exit(0)  # never waited for: a zombie while the launcher lives
    launcher_waits_for_ranks(ready_dir)


if __name__ == "__main__":
    main()
