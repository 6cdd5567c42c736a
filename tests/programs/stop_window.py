# -*- coding: utf-8 -*-
"""A process whose stop coreanalyze --pid must hold short (tests/integration/test_live.py's
traced stop case): SLEEPERS threads asleep in time.sleep, which are read without being stopped,
and the main thread spinning in Python, which must be stopped while the stacks are read.

    python stop_window.py READY_FILE

Writes READY_FILE (its PID) once every thread has started."""
import os
import sys
import threading
import time

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
    with open(sys.argv[1] + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    count = 0
    while True:
        count += 1


if __name__ == "__main__":
    main()
