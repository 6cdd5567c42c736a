# -*- coding: utf-8 -*-
"""scripts/bench-gdb's process: THREADS Python threads, each DEPTH Python frames deep, blocked on
one held lock, plus the blocked main thread. Writes its ground truth like tests/programs/ do."""
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "programs"))
import groundtruth  # noqa: E402

THREADS = int(os.environ.get("HANGPY_BENCH_THREADS", "200"))
DEPTH = 10


def descend(depth, lock):
    if depth > 1:
        return descend(depth - 1, lock)
    groundtruth.announce_blocking()
    lock.acquire()  # held: never returns


def main():
    path = groundtruth.output_path()
    groundtruth.start(path, blockers=THREADS + 1)
    lock = groundtruth.held_lock()
    workers = [threading.Thread(target=descend, args=(DEPTH, lock), name="worker-%d" % i)
               for i in range(THREADS)]
    for worker in workers:
        worker.start()
    groundtruth.announce_blocking()
    workers[0].join()


if __name__ == "__main__":
    main()
