# -*- coding: utf-8 -*-
"""A thread about 300 Python frames deep, blocked at the bottom."""
import groundtruth

DEPTH = 300


def descend(depth, lock):
    if depth > 0:
        return descend(depth - 1, lock)
    groundtruth.expect_wait("lock", lock, owner="self")
    groundtruth.announce_blocking()
    lock.acquire()  # held: never returns


def main():
    groundtruth.start(groundtruth.output_path(), blockers=1)
    descend(DEPTH, groundtruth.held_lock())


if __name__ == "__main__":
    main()
