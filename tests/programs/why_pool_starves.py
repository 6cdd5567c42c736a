# -*- coding: utf-8 -*-
"""Why-stuck scenario: a ThreadPoolExecutor that starves itself. Its one worker ("loader_0") runs
a task that submits another task to the same pool and waits for its result: the task it waits for
is queued behind it, and no worker is left to start it. The main thread waits for the first
task's result. The worker's wait is declared a deadlock of that one thread (groundtruth's
expect_deadlock), and "expect" holds the pool's worker count."""
import sys
import threading

import groundtruth


def read_config():
    return {"batch": 32}


def load(pool):
    config = pool.submit(read_config)  # queued behind this very task
    groundtruth.expect(pool_workers=1, waits_in="result", worker=threading.current_thread().name)
    groundtruth.expect_deadlock(threading.current_thread())
    groundtruth.announce_blocking()
    return config.result()  # WAITS: the pool's only worker waits for work only it could run


def main():
    path = groundtruth.output_path()
    if sys.version_info < (3, 6):  # thread_name_prefix came with 3.6
        groundtruth.skip(path, "concurrent.futures with thread_name_prefix needs Python 3.6")
    from concurrent.futures import ThreadPoolExecutor
    groundtruth.start(path, blockers=2)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="loader")
    loaded = pool.submit(load, pool)
    groundtruth.announce_blocking()
    loaded.result()


if __name__ == "__main__":
    main()
