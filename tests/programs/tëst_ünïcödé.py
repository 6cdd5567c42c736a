# -*- coding: utf-8 -*-
"""A module whose file name and function name are not ASCII (Python 3 only)."""
import groundtruth


def función_ñ(lock):
    groundtruth.expect_wait("lock", lock, owner="self")
    groundtruth.announce_blocking()
    lock.acquire()  # held: never returns
