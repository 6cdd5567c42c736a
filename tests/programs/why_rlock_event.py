# -*- coding: utf-8 -*-
"""Why-stuck scenario: an RLock held (twice) by a thread that waits on an Event, another thread
blocked acquiring that RLock, and the main thread joining the waiter."""
import threading

import groundtruth

rlock = threading.RLock()
never = threading.Event()
held = threading.Event()


def hold_rlock_then_wait():
    with rlock:
        with rlock:
            held.set()
            groundtruth.announce_blocking()
            never.wait()  # blocked on the Event, holding the RLock twice


def acquire_rlock():
    held.wait()
    groundtruth.announce_blocking()
    with rlock:  # owned by "rlock-owner": never returns
        pass


def main():
    groundtruth.start(groundtruth.output_path(), blockers=3)
    owner = threading.Thread(target=hold_rlock_then_wait, name="rlock-owner")
    waiter = threading.Thread(target=acquire_rlock, name="rlock-waiter")
    owner.daemon = True
    owner.start()
    waiter.start()
    groundtruth.announce_blocking()
    waiter.join()


if __name__ == "__main__":
    main()
