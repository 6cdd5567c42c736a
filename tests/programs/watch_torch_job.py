"""A gloo job that trains for a while and then hangs, for coreanalyze watch's tests
(tests/integration/test_watch.py):

    torchrun ... --nproc_per_node=4 watch_torch_job.py ODD_RANK MODE READY_DIR

Every rank runs STEPS steps of an all_reduce and a short sleep (progress a watch must see); the odd
rank runs one step fewer and then (MODE hang) waits on a lock nobody releases, or (MODE
keeps-working) goes on with work of its own forever, so the others block in the all_reduce of
their last step, stuck, while it still moves. With HANG_TIMEOUT_SECONDS set, the process group
times out after that long: the waiting ranks fail, and torchrun's agent then kills the odd one
(a launcher's kill window). Each rank writes READY_DIR/rankR-PID.started at its first step; the
odd rank writes READY_DIR/hung (the time) just before it blocks."""
import os
import sys
import threading
import time

import torch
import torch.distributed as dist

STEPS = 12
STEP_SLEEP = 0.3


def write(ready_dir, name, text):
    path = os.path.join(ready_dir, name)
    with open(path + ".tmp", "w") as out:
        out.write(text)
    os.rename(path + ".tmp", path)


def train(rank, odd_rank, mode, ready_dir):
    steps = STEPS - 1 if rank == odd_rank else STEPS
    for step in range(steps):
        if step == 0:
            write(ready_dir, "rank%d-%d.started" % (rank, os.getpid()), str(time.time()))
        gradient = torch.full((256,), float(rank + step))
        dist.all_reduce(gradient)
        time.sleep(STEP_SLEEP)
    if rank == odd_rank and mode == "keeps-working":
        work_alone(ready_dir)
    if rank == odd_rank:
        wait_for_nothing(ready_dir)
    dist.barrier()


def work_alone(ready_dir):
    write(ready_dir, "hung", repr(time.time()))  # the others hang from here on
    for batch in range(10 ** 9):
        total = torch.full((256,), float(batch)).sum()
        time.sleep(0.2)


def wait_for_nothing(ready_dir):
    lock = threading.Lock()
    lock.acquire()
    write(ready_dir, "hung", repr(time.time()))
    lock.acquire()  # WATCH-ODD-RANK-WAITS


if __name__ == "__main__":
    torch.set_num_threads(1)
    timeout = os.environ.get("HANG_TIMEOUT_SECONDS")
    if timeout:
        import datetime
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=float(timeout)))
    else:
        dist.init_process_group("gloo")
    train(dist.get_rank(), int(sys.argv[1]), sys.argv[2], sys.argv[3])
