# -*- coding: utf-8 -*-
"""A DataLoader with num_workers=2 whose workers hang: the dataset's items are read under a
threading.Lock, and the main process holds that lock when the workers are forked, so each worker
inherits it locked and blocks on it in __getitem__ forever; the main process waits for the first
batch.

Ground truth: worker W writes its own to GROUND_TRUTH_JSON.workerW before it blocks; the main
process writes GROUND_TRUTH_JSON once both workers have, then asks for the first batch."""
import os
import sys
import threading
import time

import groundtruth

WORKERS = 2
WORKER_TRUTH_TIMEOUT = 60.0

# Held by the main process while the workers are forked (as a logging or cache lock can be).
items_lock = threading.Lock()


def worker_truth_path(path, worker):
    return "%s.worker%d" % (path, worker)


class LockedDataset(object):
    """A map-style dataset (torch only needs __getitem__ and __len__)."""

    def __init__(self, path):
        self.path = path

    def __len__(self):
        return 64

    def __getitem__(self, index):
        import torch.utils.data
        worker = torch.utils.data.get_worker_info().id
        groundtruth.start(worker_truth_path(self.path, worker), blockers=1)
        groundtruth.announce_blocking()
        with items_lock:  # locked in the parent at fork time: never acquired
            return index


def main():
    path = groundtruth.output_path()
    try:
        import torch.utils.data
    except ImportError as error:
        groundtruth.skip(path, "cannot import torch: %s" % error)
    loader = torch.utils.data.DataLoader(LockedDataset(path), batch_size=4, num_workers=WORKERS,
                                         multiprocessing_context="fork")
    with items_lock:
        batches = iter(loader)  # forks the workers and sends them their first indices
    deadline = time.time() + WORKER_TRUTH_TIMEOUT
    while not all(os.path.exists(worker_truth_path(path, w)) for w in range(WORKERS)):
        if time.time() > deadline:
            sys.stderr.write("torch_dataloader_hang: not every worker wrote its ground truth\n")
            sys.exit(1)
        time.sleep(0.1)
    groundtruth.start(path, blockers=1)
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and thread.name.startswith("QueueFeederThread"):
            groundtruth.announce_already_blocked(thread)  # idle: each index queue's sender
    groundtruth.announce_blocking()
    next(batches)  # waits for a batch no worker ever sends


if __name__ == "__main__":
    main()
