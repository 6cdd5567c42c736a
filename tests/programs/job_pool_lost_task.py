"""A multiprocessing.Pool that loses a task (tests/integration/test_jobs.py): the worker running
task LOST_TASK of pool.map is killed (SIGKILL, as the kernel's out-of-memory killer does). Pool
starts a worker in its place, but nobody runs that task again, and pool.map waits for its
result for ever while every worker waits for work.

    python3 job_pool_lost_task.py READY_DIR

The parent writes READY_DIR/parent-PID.ready (its ground truth as JSON: the pool's size, the task
lost, the line it waits at) just before pool.map, marked MAP-WAITS; the worker that dies writes
READY_DIR/worker-PID.gone as it goes. Python 3."""
import json
import multiprocessing
import os
import signal
import sys

WORKERS = 2
TASKS = 6
LOST_TASK = 3


def write_truth(ready_dir, name, suffix, truth):
    path = os.path.join(ready_dir, "%s-%d.%s" % (name, os.getpid(), suffix))
    with open(path + ".tmp", "w") as out:
        json.dump(truth, out)
    os.rename(path + ".tmp", path)


def square(task):
    if task == LOST_TASK:
        write_truth(READY_DIR, "worker", "gone", {"task": task, "signal": signal.SIGKILL})
        os.kill(os.getpid(), signal.SIGKILL)
    return task * task


def main():
    context = multiprocessing.get_context("fork")
    with context.Pool(WORKERS) as pool:
        write_truth(READY_DIR, "parent", "ready", {"workers": WORKERS, "lost_task": LOST_TASK,
                                                   "waits_in": "map"})
        print(pool.map(square, range(TASKS), chunksize=1))  # MAP-WAITS


if __name__ == "__main__":
    READY_DIR = sys.argv[1]
    main()
