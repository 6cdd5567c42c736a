# -*- coding: utf-8 -*-
"""20 threads each 100 Python frames deep, blocked on a lock, and no big heap: the process whose
stop time coreanalyze --pid measures (tests/integration/test_live.py, scripts/bench)."""
import groundtruth

THREADS = 20
DEPTH = 100


def main():
    groundtruth.block_in_deep_threads(groundtruth.output_path(), THREADS, DEPTH, "deep")


if __name__ == "__main__":
    main()
