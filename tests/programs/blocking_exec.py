# -*- coding: utf-8 -*-
"""Code compiled by exec() from a string (file name "<string>") that blocks."""
import groundtruth

SOURCE = """
def run_from_string():
    groundtruth.expect_wait("lock", lock, owner="self")
    groundtruth.announce_blocking()
    lock.acquire()

run_from_string()
"""


def main():
    groundtruth.start(groundtruth.output_path(), blockers=1)
    namespace = {"groundtruth": groundtruth, "lock": groundtruth.held_lock()}
    exec(SOURCE, namespace)  # the tuple form also works on Python 2.7


if __name__ == "__main__":
    main()
