# -*- coding: utf-8 -*-
"""A thread blocked in a C call made from JIT-compiled code (CPython 3.13+ built with
--enable-experimental-jit): a hot loop calls lock.acquire(blocking) every turn, non-blocking until
the last turn, so by then the loop runs as a compiled trace and the final, blocking call comes from
the JIT's code (anonymous memory with no unwind table) rather than from the eval loop."""
import sys
import threading

import groundtruth


def spin(lock, turns):
    total = 0
    for turn in range(turns):
        total += turn
        lock.acquire(turn == turns - 1)  # blocks on the last turn, called from the trace
    return total


def main():
    jit = getattr(sys, "_jit", None)
    enabled = bool(jit and jit.is_enabled())
    groundtruth.record_section("jit", {"enabled": enabled})
    groundtruth.start(groundtruth.output_path(), blockers=1)
    lock = threading.Lock()
    lock.acquire()
    # Announced before the loop (an announcement inside it would leave the trace): the reporter
    # lets the thread settle, and the loop takes milliseconds.
    groundtruth.announce_blocking()
    spin(lock, 200000)


if __name__ == "__main__":
    main()
