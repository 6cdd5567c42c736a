# -*- coding: utf-8 -*-
"""A data-parallel job that hangs: 4 ranks (torch.multiprocessing.spawn, gloo backend on
loopback), and rank 3 is given one batch fewer than the others. It leaves its loop and waits on a
lock, while ranks 0-2 block in the all_reduce of their last batch, which rank 3 never joins.

Ground truth: each rank R writes its own to GROUND_TRUTH_JSON.rankR before it blocks; the
launching process writes GROUND_TRUTH_JSON once every rank has written its own, and then waits
for the ranks forever."""
import os
import socket
import sys
import time

import groundtruth

WORLD_SIZE = 4
BATCHES = 3  # every rank but the last; the last rank gets BATCHES - 1
RANK_TRUTH_TIMEOUT = 120.0  # the ranks each import torch and meet over TCP


def rank_truth_path(path, rank):
    return "%s.rank%d" % (path, rank)


def train(rank, path, port):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # gloo on loopback: no host name to look up
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=WORLD_SIZE)
    groundtruth.start(rank_truth_path(path, rank), blockers=1)
    batches = BATCHES - 1 if rank == WORLD_SIZE - 1 else BATCHES
    for batch in range(batches):
        gradient = torch.full((1024,), float(rank + batch))
        if batch == BATCHES - 1:
            groundtruth.announce_blocking()  # the all_reduce the last rank never joins
        dist.all_reduce(gradient)
    wait_for_the_others(rank)


def wait_for_the_others(rank):
    """The last rank, done with its batches: it waits on a lock that nobody releases."""
    done = groundtruth.held_lock()
    groundtruth.announce_blocking()
    done.acquire()  # held: never returns


def free_port():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    return port


def main():
    path = groundtruth.output_path()
    try:
        import torch.distributed as dist
        import torch.multiprocessing as mp
    except ImportError as error:
        groundtruth.skip(path, "cannot import torch: %s" % error)
    if not dist.is_available() or not dist.is_gloo_available():
        groundtruth.skip(path, "this torch has no gloo backend")
    context = mp.spawn(train, args=(path, free_port()), nprocs=WORLD_SIZE, join=False)
    deadline = time.time() + RANK_TRUTH_TIMEOUT
    while not all(os.path.exists(rank_truth_path(path, rank)) for rank in range(WORLD_SIZE)):
        if time.time() > deadline:
            sys.stderr.write("torch_allreduce_hang: not every rank wrote its ground truth\n")
            sys.exit(1)
        time.sleep(0.1)
    groundtruth.start(path, blockers=1)
    groundtruth.announce_blocking()
    context.join()  # the ranks never end


if __name__ == "__main__":
    main()
