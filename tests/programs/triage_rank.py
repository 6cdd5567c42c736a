# -*- coding: utf-8 -*-
"""One rank of a data-parallel job that hangs, without PyTorch (for `coreanalyze triage`): the
rank named by TRIAGE_ODD_RANK (default: the last, WORLD_SIZE - 1) was given one batch fewer, left
its loop and waits in barrier(); every other rank waits in all_reduce() for a peer that never
answers. Every rank also has two identical pool threads waiting for work, which the triage folds
into one stack (x2).

The rank comes from RANK, as torchrun sets it. Ground truth as every scenario writes it
(groundtruth.py), once all three threads block."""
import os
import threading

import groundtruth

BATCHES = 3


def all_reduce(peer_reply):
    peer_reply.acquire()  # BLOCKS: the odd rank never answers


def barrier(everyone_arrived):
    everyone_arrived.wait()  # BLOCKS: the other ranks are still in all_reduce


def pool_worker(work):
    groundtruth.announce_blocking()
    work.wait()  # BLOCKS: no work comes


def train(rank, odd_rank):
    peer_reply = groundtruth.held_lock()
    batches = BATCHES - 1 if rank == odd_rank else BATCHES
    for batch in range(batches):
        if batch == BATCHES - 1:
            groundtruth.announce_blocking()
            all_reduce(peer_reply)
    groundtruth.announce_blocking()
    barrier(threading.Event())


def main():
    world_size = int(os.environ.get("WORLD_SIZE", "4"))
    rank = int(os.environ.get("RANK", "0"))
    odd_rank = int(os.environ.get("TRIAGE_ODD_RANK", str(world_size - 1)))
    groundtruth.start(groundtruth.output_path(), blockers=3)
    work = threading.Event()
    for number in range(2):
        threading.Thread(target=pool_worker, args=(work,), name="pool-%d" % number).start()
    train(rank, odd_rank)


if __name__ == "__main__":
    main()
