# -*- coding: utf-8 -*-
"""Why-stuck scenario: one thread per kind of wait, each named after what it waits in: queue.Queue
get, Semaphore acquire, Condition wait, Barrier wait (3.2 on), time.sleep, socket recv,
select.select, multiprocessing Queue get, a write to a full pipe nobody reads; and a
multiprocessing Queue's feeder thread blocked sending to a pipe nobody reads (work in hand, not
idle). The main thread joins the first of them."""
import multiprocessing
import os
import select
import socket
import sys
import threading
import time

try:
    import queue
except ImportError:  # Python 2
    import Queue as queue

import groundtruth


def main():
    path = groundtruth.output_path()
    work = queue.Queue()
    semaphore = threading.Semaphore(0)
    condition = threading.Condition()
    reader, writer = socket.socketpair()
    process_queue = multiprocessing.Queue()
    pipe_read, pipe_write = os.pipe()  # nobody reads: a big write blocks once the pipe is full
    unread_queue = multiprocessing.Queue()  # nobody gets: its feeder blocks sending

    def wait_in_condition():
        with condition:
            groundtruth.announce_blocking()
            condition.wait()

    waits = [
        ("queue-get", work.get),
        ("semaphore-acquire", semaphore.acquire),
        ("condition-wait", wait_in_condition),
        ("sleep", lambda: time.sleep(3600)),
        ("socket-recv", lambda: reader.recv(1)),
        ("select", lambda: select.select([reader], [], [])),
        ("process-queue-get", process_queue.get),
        ("pipe-write", lambda: os.write(pipe_write, b"x" * (1 << 20))),
    ]
    if hasattr(threading, "Barrier"):
        waits.append(("barrier-wait", threading.Barrier(2).wait))

    def run(wait):
        if wait is not wait_in_condition:
            groundtruth.announce_blocking()
        wait()

    groundtruth.start(path, blockers=len(waits) + 2)
    threads = [threading.Thread(target=run, args=(wait,), name=name) for name, wait in waits]
    for thread in threads:
        thread.daemon = True
        thread.start()
    unread_queue.put(b"x" * (1 << 20))  # starts the feeder, which blocks writing it
    for _ in range(200):
        feeder = [t for t in threading.enumerate() if t.name == "QueueFeederThread"]
        if feeder:
            break
        time.sleep(0.05)
    if feeder:
        groundtruth.announce_already_blocked(feeder[0])
    groundtruth.announce_blocking()
    threads[0].join()
    del writer, sys, pipe_read  # kept open (and imported) until here: recv, select, the writes
    # never return


if __name__ == "__main__":
    main()
