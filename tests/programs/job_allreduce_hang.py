"""A data-parallel job that hangs, for the job-triage tests (tests/integration/test_jobs.py): gloo
ranks on loopback, one of them (ODD_RANK) given one batch fewer than the others. It leaves its loop
and waits on a lock nobody releases, while the others block in the all_reduce of their last batch.

    torchrun --master_addr 127.0.0.1 --master_port PORT --nproc_per_node=8 job_allreduce_hang.py READY_DIR ODD_RANK
    python3 job_allreduce_hang.py --spawn 4 READY_DIR ODD_RANK    # torch.multiprocessing.spawn

Each rank writes READY_DIR/rankR-PID.ready just before it blocks; the place the odd rank waits is
the line marked ODD-RANK-WAITS (the test reads the line number from this file)."""
import os
import socket
import sys
import threading

import torch
import torch.distributed as dist

BATCHES = 3  # every rank but the odd one; the odd one gets BATCHES - 1


def ready(ready_dir, rank):
    path = os.path.join(ready_dir, "rank%d-%d.ready" % (rank, os.getpid()))
    with open(path + ".tmp", "w") as out:
        out.write(str(rank))
    os.rename(path + ".tmp", path)


def train(rank, odd_rank, ready_dir):
    batches = BATCHES - 1 if rank == odd_rank else BATCHES
    for batch in range(batches):
        gradient = torch.full((1024,), float(rank + batch))
        if batch == BATCHES - 1:
            ready(ready_dir, rank)  # the all_reduce the odd rank never joins
        dist.all_reduce(gradient)
    wait_for_the_others(rank, ready_dir)


def wait_for_the_others(rank, ready_dir):
    """The odd rank, done with its batches: it waits on a lock that nobody releases."""
    done = threading.Lock()
    done.acquire()
    ready(ready_dir, rank)
    done.acquire()  # ODD-RANK-WAITS


def spawned_rank(rank, world_size, port, odd_rank, ready_dir):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=world_size)
    train(rank, odd_rank, ready_dir)


def free_port():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    return port


def main():
    if sys.argv[1] == "--spawn":
        import torch.multiprocessing as mp
        world_size, ready_dir, odd_rank = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
        mp.spawn(spawned_rank, args=(world_size, free_port(), odd_rank, ready_dir),
                 nprocs=world_size, join=True)
        return
    ready_dir, odd_rank = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")  # MASTER_ADDR, RANK, WORLD_SIZE from torchrun
    train(dist.get_rank(), odd_rank, ready_dir)


if __name__ == "__main__":
    main()
