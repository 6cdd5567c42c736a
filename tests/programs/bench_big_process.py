# -*- coding: utf-8 -*-
"""A big process for scripts/bench: 20 threads each 100 Python frames deep, blocked, and more than
1 GB of heap (one large buffer whose pages are all touched, plus a few million small objects).
HANGPY_BENCH_HEAP_GIB sets the buffer's size in GiB (scripts/bench --big-gib: a multi-GB core)."""
import os

import groundtruth

THREADS = 20
DEPTH = 100  # Python frames below each thread's run(); the bootstrap frames come on top
BIG_BUFFER_BYTES = int(float(os.environ.get("HANGPY_BENCH_HEAP_GIB", "1")) * (1 << 30))
SMALL_OBJECTS = 2000000
PAGE = 4096


def fill_heap():
    big = bytearray(BIG_BUFFER_BYTES)
    # calloc'd pages are not real until written; a non-zero byte per page also keeps
    # `fallocate --dig-holes` from making them holes in the core again.
    big[::PAGE] = b"\x01" * (BIG_BUFFER_BYTES // PAGE)
    small = [{"index": i, "name": "object-%d" % i} for i in range(SMALL_OBJECTS)]
    return big, small


def main():
    path = groundtruth.output_path()
    heap = fill_heap()  # noqa: F841 (kept alive while the threads block)
    groundtruth.block_in_deep_threads(path, THREADS, DEPTH, "deep")


if __name__ == "__main__":
    main()
