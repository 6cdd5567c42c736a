"""A DataLoader with 3 workers of which one deadlocks, for the job-triage tests: worker STUCK
waits in __getitem__ on an Event that only it would be sent, and never is; the other workers have
made their batches and wait for more indices, and the main process waits for the stuck worker's
batch (a DataLoader returns batches in order).

    python3 job_dataloader_hang.py READY_DIR

Each worker writes READY_DIR/workerW-PID.ready when it has made an item (the stuck one just before
it blocks), the main process READY_DIR/main-PID.ready before it asks for the batches. The stuck
worker waits at the line marked WORKER-WAITS."""
import os
import sys
import threading

import torch.utils.data

WORKERS = 3
STUCK = 1
only_for_the_stuck_worker = threading.Event()


def ready(ready_dir, name):
    path = os.path.join(ready_dir, "%s-%d.ready" % (name, os.getpid()))
    if os.path.exists(path):
        return
    with open(path + ".tmp", "w") as out:
        out.write(name)
    os.rename(path + ".tmp", path)


class Dataset(object):
    """A map-style dataset (torch only needs __getitem__ and __len__)."""

    def __init__(self, ready_dir):
        self.ready_dir = ready_dir

    def __len__(self):
        return 64

    def __getitem__(self, index):
        worker = torch.utils.data.get_worker_info().id
        if worker == STUCK:
            wait_for_a_message(self.ready_dir, worker)
        ready(self.ready_dir, "worker%d" % worker)
        return index


def wait_for_a_message(ready_dir, worker):
    ready(ready_dir, "worker%d" % worker)
    only_for_the_stuck_worker.wait()  # WORKER-WAITS


def main():
    ready_dir = sys.argv[1]
    torch.set_num_threads(1)
    loader = torch.utils.data.DataLoader(Dataset(ready_dir), batch_size=4, num_workers=WORKERS,
                                         multiprocessing_context="fork")
    ready(ready_dir, "main")
    for batch in loader:
        pass


if __name__ == "__main__":
    main()
