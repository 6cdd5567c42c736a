# -*- coding: utf-8 -*-
"""scripts/bench-gdb's process: THREADS Python threads, each DEPTH Python frames deep, blocked on
one held lock, plus the blocked main thread. Writes its ground truth like tests/programs/ do."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "programs"))
import groundtruth  # noqa: E402

THREADS = int(os.environ.get("HANGPY_BENCH_THREADS", "200"))
DEPTH = 10


def main():
    groundtruth.block_in_deep_threads(groundtruth.output_path(), THREADS, DEPTH, "worker")


if __name__ == "__main__":
    main()
