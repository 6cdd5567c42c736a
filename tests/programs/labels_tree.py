# -*- coding: utf-8 -*-
"""A process tree whose members coreanalyze labels (tests/integration/test_labels.py).

  labels_tree.py MODE READY_PATH

Each mode writes READY_PATH (JSON: the role of each process by PID) once every process has
started, then every process blocks until killed:
- plain: this process only (its labels come from the environment the test gives it, and one,
  GROUP_RANK=2, it sets in os.environ at run time, as scripts set RANK);
- tree: a child started with the 'spawn' context (which starts multiprocessing's
  resource_tracker from 3.8 on) and one started with 'fork';
- dataloader: a torch DataLoader with 2 workers, each blocked in its dataset's __getitem__.
"""
import json
import os
import sys
import threading
import time


def block_forever():
    while True:
        time.sleep(3600)


def write_ready(path, roles):
    temporary = path + ".tmp"
    with open(temporary, "w") as stream:
        json.dump(roles, stream)
    os.rename(temporary, path)


def tree(ready_path):
    import multiprocessing
    spawned = multiprocessing.get_context("spawn").Process(target=block_forever)
    spawned.start()
    forked = multiprocessing.get_context("fork").Process(target=block_forever)
    forked.start()
    roles = {str(os.getpid()): "main", str(spawned.pid): "spawn child", str(forked.pid): "fork child"}
    try:
        from multiprocessing import resource_tracker
        tracker_pid = resource_tracker._resource_tracker._pid
        if tracker_pid:
            roles[str(tracker_pid)] = "resource_tracker"
    except ImportError:  # before 3.8: semaphore_tracker, started only for semaphores
        pass
    write_ready(ready_path, roles)
    block_forever()


class BlockingDataset(object):
    """Each item blocks its worker after saying which worker it is."""

    def __init__(self, directory):
        self.directory = directory

    def __len__(self):
        return 100

    def __getitem__(self, index):
        import torch.utils.data
        with open(os.path.join(self.directory, "worker.%d" % os.getpid()), "w") as out:
            out.write(str(torch.utils.data.get_worker_info().id))  # the worker's id: ground truth
        block_forever()


def dataloader(ready_path):
    import torch.utils.data
    directory = os.path.dirname(os.path.abspath(ready_path))
    loader = torch.utils.data.DataLoader(BlockingDataset(directory), num_workers=2)
    iterator = iter(loader)
    worker_pids = [process.pid for process in iterator._workers]

    def report_when_started():
        while not all(os.path.exists(os.path.join(directory, "worker.%d" % pid)) for pid in worker_pids):
            time.sleep(0.05)
        roles = {str(os.getpid()): "main"}
        roles.update((str(pid), "DataLoader worker") for pid in worker_pids)
        write_ready(ready_path, roles)

    threading.Thread(target=report_when_started).start()
    next(iterator)  # never returns: every worker blocks


def main():
    mode, ready_path = sys.argv[1], sys.argv[2]
    if mode == "plain":
        os.environ["GROUP_RANK"] = "2"
        write_ready(ready_path, {str(os.getpid()): "main"})
        block_forever()
    elif mode == "tree":
        tree(ready_path)
    elif mode == "dataloader":
        dataloader(ready_path)
    else:
        raise SystemExit("unknown mode %r" % mode)


if __name__ == "__main__":
    main()
