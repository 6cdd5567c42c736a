# -*- coding: utf-8 -*-
"""A process with OS threads that run no Python: two started through pthread_create (as native
libraries start theirs), while the main thread blocks on a lock."""
import groundtruth


def main():
    path = groundtruth.output_path()
    if not (groundtruth.start_native_thread() and groundtruth.start_native_thread()):
        groundtruth.skip(path, "no ctypes or pthread_create failed")
    groundtruth.start(path, blockers=1)
    lock = groundtruth.held_lock()
    groundtruth.expect_wait("lock", lock, owner="self")
    groundtruth.announce_blocking()
    lock.acquire()


if __name__ == "__main__":
    main()
