# -*- coding: utf-8 -*-
"""Why-stuck scenario: a pthread mutex locked through ctypes by one thread (which then waits on an
Event), and another thread blocked in pthread_mutex_lock on it (ctypes releases the GIL)."""
import threading

import groundtruth

never = threading.Event()
locked = threading.Event()


def main():
    path = groundtruth.output_path()
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        libc.pthread_mutex_lock
    except (ImportError, OSError, AttributeError):
        groundtruth.skip(path, "no ctypes or no pthread_mutex_lock")
    mutex = ctypes.create_string_buffer(64)  # zeroed: PTHREAD_MUTEX_INITIALIZER on glibc
    groundtruth.expect(mutex=ctypes.addressof(mutex))

    def own():
        libc.pthread_mutex_lock(mutex)
        locked.set()
        groundtruth.announce_blocking()
        never.wait()

    def wait():
        locked.wait()
        groundtruth.announce_blocking()
        libc.pthread_mutex_lock(mutex)  # owned by "mutex-owner": never returns

    groundtruth.start(path, blockers=3)
    owner = threading.Thread(target=own, name="mutex-owner")
    waiter = threading.Thread(target=wait, name="mutex-waiter")
    owner.daemon = True
    owner.start()
    waiter.start()
    groundtruth.announce_blocking()
    waiter.join()


if __name__ == "__main__":
    main()
