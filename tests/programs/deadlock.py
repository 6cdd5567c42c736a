# -*- coding: utf-8 -*-
"""Two threads deadlocked on two locks (ABBA) while the main thread joins one of them."""
import threading

import groundtruth

lock_a = threading.Lock()
lock_b = threading.Lock()
a_taken = threading.Event()
b_taken = threading.Event()


threads = {}  # name -> Thread, for the ground truth's owners


def take_a_then_b():
    with lock_a:
        a_taken.set()
        b_taken.wait()
        groundtruth.expect_holds(lock_a)
        groundtruth.expect_wait("lock", lock_b, owner=threads["worker-ba"])
        groundtruth.announce_blocking()
        with lock_b:  # held by take_b_then_a, which waits for lock_a: never returns
            pass


def take_b_then_a():
    with lock_b:
        b_taken.set()
        a_taken.wait()
        groundtruth.expect_holds(lock_b)
        groundtruth.expect_wait("lock", lock_a, owner=threads["worker-ab"])
        groundtruth.announce_blocking()
        with lock_a:  # held by take_a_then_b: never returns
            pass


def main():
    groundtruth.start(groundtruth.output_path(), blockers=3)
    first = threading.Thread(target=take_a_then_b, name="worker-ab")
    second = threading.Thread(target=take_b_then_a, name="worker-ba")
    threads.update({"worker-ab": first, "worker-ba": second})
    first.start()
    second.start()
    groundtruth.expect_deadlock(first, second)
    groundtruth.expect_wait("join", first, owner=first)
    groundtruth.announce_blocking()
    first.join()


if __name__ == "__main__":
    main()
