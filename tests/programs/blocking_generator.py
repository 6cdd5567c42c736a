# -*- coding: utf-8 -*-
"""A generator whose body blocks while it is being advanced."""
import groundtruth


def numbers(lock):
    yield 1
    groundtruth.expect_wait("lock", lock, owner="self")
    groundtruth.announce_blocking()
    lock.acquire()  # held: never returns
    yield 2


def main():
    groundtruth.start(groundtruth.output_path(), blockers=1)
    for _ in numbers(groundtruth.held_lock()):
        pass


if __name__ == "__main__":
    main()
