# -*- coding: utf-8 -*-
"""Why-stuck scenario: one thread in a C call that never gives the GIL back (catastrophic
backtracking in `re`), two threads that want the GIL to run Python, the main thread joining.

The ground truth is written before the regex starts (nothing can run Python afterwards), so its
frames of the spinning threads are earlier lines than the core's; the names and LWPs are what the
test uses."""
import os
import re
import threading
import time

import groundtruth

regex_starts = threading.Event()
reporter = []
# The OS threads the process had before the scenario's: 1, or 2 under qemu-user (its RCU thread).
threads_at_start = []


def spin():
    groundtruth.announce_blocking()
    regex_starts.wait()  # from here on this thread needs the GIL, which "regex" keeps
    count = 0
    while True:  # needs the GIL for every bytecode
        count += 1


def backtrack():
    groundtruth.announce_blocking()
    reporter[0].join()  # the ground truth is on disk and its thread gone: no one else needs to run
    # Python 2's join returns before the thread's C-level exit, which takes the GIL this thread is
    # about to keep forever: wait until its OS thread is gone (main, regex and two spinners left).
    while len(os.listdir("/proc/self/task")) > threads_at_start[0] + 3:
        time.sleep(0.01)
    regex_starts.set()  # releases no GIL: this thread goes straight on into the regex
    re.match(r"(a+)+$", "a" * 64 + "b")  # 2**64 steps inside _sre, holding the GIL


def main():
    threads_at_start.append(len(os.listdir("/proc/self/task")))
    reporter.append(groundtruth.start(groundtruth.output_path(), blockers=4))
    threads = [threading.Thread(target=backtrack, name="regex")]
    threads += [threading.Thread(target=spin, name="spinner-%d" % i) for i in (1, 2)]
    for thread in threads:
        thread.start()
    groundtruth.announce_blocking()
    threads[0].join()


if __name__ == "__main__":
    main()
