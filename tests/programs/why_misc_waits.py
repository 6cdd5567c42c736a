# -*- coding: utf-8 -*-
"""Why-stuck scenario: one thread per kind of wait, each named after what it waits in: queue.Queue
get, Semaphore acquire, Condition wait, Barrier wait (3.2 on), time.sleep, socket recv,
select.select, multiprocessing Queue get. The main thread joins the first of them."""
import multiprocessing
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
    ]
    if hasattr(threading, "Barrier"):
        waits.append(("barrier-wait", threading.Barrier(2).wait))

    def run(wait):
        if wait is not wait_in_condition:
            groundtruth.announce_blocking()
        wait()

    groundtruth.start(path, blockers=len(waits) + 1)
    threads = [threading.Thread(target=run, args=(wait,), name=name) for name, wait in waits]
    for thread in threads:
        thread.daemon = True
        thread.start()
    groundtruth.announce_blocking()
    threads[0].join()
    del writer, sys  # kept open (and imported) until here: recv and select never return


if __name__ == "__main__":
    main()
