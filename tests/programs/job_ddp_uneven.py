"""DistributedDataParallel with uneven batches, for the job-triage tests (issue 21): 3 gloo ranks
started by torch.multiprocessing.spawn (no RANK in their environment); rank ODD_RANK is given one
batch fewer, leaves its loop and waits in dist.barrier() (the line marked ODD-RANK-BARRIER); the
others block in loss.backward() of their last batch (the line marked DDP-BACKWARD), where DDP's
reducer waits for the gradients' all_reduce that the odd rank never joins.

    python3 job_ddp_uneven.py READY_DIR [RANKS ODD_RANKS]

RANKS and ODD_RANKS ("2,3": two groups of two, which no majority tells apart) change the job's
size and which ranks get one batch fewer.

Each rank writes READY_DIR/rankR-PID.ready just before it blocks."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

from job_allreduce_hang import free_port, ready  # the same ready files and port as the other jobs

RANKS = 3
ODD_RANK = 2
BATCHES = 3  # every rank but the odd one; the odd one gets BATCHES - 1


def run(rank, port, ready_dir, ranks=RANKS, odd_ranks=(ODD_RANK,)):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=ranks)
    model = DistributedDataParallel(torch.nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = BATCHES - 1 if rank in odd_ranks else BATCHES
    for batch in range(batches):
        loss = model(torch.randn(8, 16)).sum()
        if batch == BATCHES - 1:
            ready(ready_dir, rank)
        loss.backward()  # DDP-BACKWARD
        optimizer.step()
    ready(ready_dir, rank)
    dist.barrier()  # ODD-RANK-BARRIER


if __name__ == "__main__":
    ranks = int(sys.argv[2]) if len(sys.argv) > 2 else RANKS
    odd_ranks = tuple(int(r) for r in sys.argv[3].split(",")) if len(sys.argv) > 3 else (ODD_RANK,)
    mp.spawn(run, args=(free_port(), sys.argv[1], ranks, odd_ranks), nprocs=ranks)
