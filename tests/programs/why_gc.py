# -*- coding: utf-8 -*-
"""Why-stuck scenario: a thread stuck inside a garbage collection (a finalizer of cyclic garbage
that never returns, spinning in Python, so the thread keeps the GIL), the main thread joining."""
import gc
import sys
import threading

import groundtruth


class Finalized(object):
    def __del__(self):
        groundtruth.announce_blocking()
        while True:  # inside gc.collect(): the collector's `collecting` flag stays set
            pass


def collect():
    garbage = Finalized()
    garbage.cycle = garbage
    del garbage
    gc.collect()


def main():
    path = groundtruth.output_path()
    if sys.version_info < (3, 4):
        groundtruth.skip(path, "cycles with __del__ are collected from 3.4 on (PEP 442)")
    groundtruth.start(path, blockers=2)
    collector = threading.Thread(target=collect, name="collector")
    collector.start()
    groundtruth.announce_blocking()
    collector.join()


if __name__ == "__main__":
    main()
