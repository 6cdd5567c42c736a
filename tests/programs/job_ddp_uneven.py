"""DistributedDataParallel with uneven batches, for the job-triage tests (issue 21): 3 gloo ranks
started by torch.multiprocessing.spawn (no RANK in their environment); rank ODD_RANK is given one
batch fewer, leaves its loop and waits in dist.barrier() (the line marked ODD-RANK-BARRIER); the
others block in loss.backward() of their last batch (the line marked DDP-BACKWARD), where DDP's
reducer waits for the gradients' all_reduce that the odd rank never joins.

    python3 job_ddp_uneven.py READY_DIR

Each rank writes READY_DIR/rankR-PID.ready just before it blocks."""
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

RANKS = 3
ODD_RANK = 2
BATCHES = 3  # every rank but the odd one; the odd one gets BATCHES - 1


def ready(ready_dir, rank):
    path = os.path.join(ready_dir, "rank%d-%d.ready" % (rank, os.getpid()))
    with open(path + ".tmp", "w") as out:
        out.write(str(rank))
    os.rename(path + ".tmp", path)


def run(rank, port, ready_dir):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=RANKS)
    model = DistributedDataParallel(torch.nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = BATCHES - 1 if rank == ODD_RANK else BATCHES
    for batch in range(batches):
        loss = model(torch.randn(8, 16)).sum()
        if batch == BATCHES - 1:
            ready(ready_dir, rank)
        loss.backward()  # DDP-BACKWARD
        optimizer.step()
    ready(ready_dir, rank)
    dist.barrier()  # ODD-RANK-BARRIER


def free_port():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    return port


if __name__ == "__main__":
    mp.spawn(run, args=(free_port(), sys.argv[1]), nprocs=RANKS)
