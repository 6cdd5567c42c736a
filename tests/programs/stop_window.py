# -*- coding: utf-8 -*-
"""A process whose stop coreanalyze --pid must hold short (tests/integration/test_live.py's
traced stop case): SLEEPERS threads asleep in time.sleep, which are read without being stopped,
an OS thread that runs no Python (as OpenMP's and gloo's do: asleep in libc's sleep, started
through pthread_create), and the main thread spinning in Python, which must be stopped while the
stacks are read.

    python stop_window.py READY_FILE

Writes READY_FILE (its PID) once every thread has started."""
import os
import sys
import threading
import time

import groundtruth

SLEEPERS = 20


def sleeper(started):
    started.release()
    time.sleep(3600)


def main():
    started = threading.Semaphore(0)
    for _ in range(SLEEPERS):
        threading.Thread(target=sleeper, args=(started,), daemon=True).start()
    for _ in range(SLEEPERS):
        started.acquire()
    groundtruth.start_native_thread()  # without ctypes, the case runs without it
    with open(sys.argv[1] + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    count = 0
    while True:
        count += 1


if __name__ == "__main__":
    main()
