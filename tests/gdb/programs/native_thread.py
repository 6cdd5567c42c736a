# -*- coding: utf-8 -*-
"""A process with one native thread that runs no Python code: faulthandler's watchdog thread
(dump_traceback_later starts it without a Python thread state), while the main thread blocks.
Writes its ground truth like tests/programs/ do; the watchdog is not in it."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "programs"))
import groundtruth  # noqa: E402


def wait_forever(lock):
    groundtruth.announce_blocking()
    lock.acquire()  # held: never returns


def main():
    path = groundtruth.output_path()
    try:
        import faulthandler
    except ImportError:
        groundtruth.skip(path, "no faulthandler (Python 2) to start a thread without Python")
    faulthandler.dump_traceback_later(24 * 3600, exit=False)
    groundtruth.start(path, blockers=1)
    wait_forever(groundtruth.held_lock())


if __name__ == "__main__":
    main()
