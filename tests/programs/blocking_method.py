# -*- coding: utf-8 -*-
"""A method that blocks: its qualified name is JobQueue.wait_for_job."""
import groundtruth


class JobQueue(object):
    def __init__(self):
        self.lock = groundtruth.held_lock()

    def wait_for_job(self):
        groundtruth.expect_wait("lock", self.lock, owner="self")
        groundtruth.announce_blocking()
        self.lock.acquire()  # held: never returns


def main():
    groundtruth.start(groundtruth.output_path(), blockers=1)
    JobQueue().wait_for_job()


if __name__ == "__main__":
    main()
