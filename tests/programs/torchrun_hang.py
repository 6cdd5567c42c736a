"""A torchrun job that hangs, for coreanalyze collect's tests: 2 ranks on the gloo backend;
rank 0 blocks in all_reduce, which rank 1 never joins: it waits on a lock instead. Each rank
writes READY_DIR/rankR-PID.ready just before it blocks.

    torchrun --master_addr 127.0.0.1 --master_port PORT --nproc_per_node=2 torchrun_hang.py READY_DIR

(a static rendezvous at 127.0.0.1, no name to resolve: test_collect.torchrun_argv)
"""
import os
import sys
import threading

import torch
import torch.distributed as dist


def ready(ready_dir, rank):
    path = os.path.join(ready_dir, "rank%d-%d.ready" % (rank, os.getpid()))
    with open(path + ".tmp", "w") as out:
        out.write(str(rank))
    os.rename(path + ".tmp", path)


def rank_one_waits_elsewhere(ready_dir, rank):
    never = threading.Lock()
    never.acquire()
    ready(ready_dir, rank)
    never.acquire()


def rank_zero_reduces(ready_dir, rank):
    gradient = torch.ones(16)
    ready(ready_dir, rank)
    dist.all_reduce(gradient)


def main():
    ready_dir = sys.argv[1]
    torch.set_num_threads(1)
    dist.init_process_group("gloo")  # MASTER_ADDR, RANK, WORLD_SIZE from torchrun
    rank = dist.get_rank()
    (rank_zero_reduces if rank == 0 else rank_one_waits_elsewhere)(ready_dir, rank)


if __name__ == "__main__":
    main()
