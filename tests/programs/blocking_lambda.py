# -*- coding: utf-8 -*-
"""A lambda that blocks (its code object is named "<lambda>")."""
import groundtruth


def main():
    groundtruth.start(groundtruth.output_path(), blockers=1)
    lock = groundtruth.held_lock()
    groundtruth.expect_wait("lock", lock, owner="self")
    wait = lambda: (groundtruth.announce_blocking(), lock.acquire())  # noqa: E731
    wait()


if __name__ == "__main__":
    main()
