"""A process that cannot exit (issue 21): its main thread has finished the script, and the
interpreter's exit waits, as it must, for what is not a daemon:

    python cannot_exit.py thread TRUTH_JSON   a thread "worker" waiting on an Event nobody sets
    python cannot_exit.py process TRUTH_JSON  a multiprocessing child (3.4 on) waiting for ever
    python cannot_exit.py feeder TRUTH_JSON   a multiprocessing Queue nobody reads, holding more
                                              than its pipe takes: multiprocessing's exit joins
                                              the queue's feeder thread (a daemon), which blocks
                                              writing

TRUTH_JSON, written before the script's end: {"pid", "worker" (the thread's name) or
"child_pid", "worker_native_id" (3.8 on), "daemon" (the worker's daemon flag)}."""
import os
import sys
import threading
import time

import groundtruth  # tests/programs/groundtruth.py: atomic JSON


def wait_for_ever():
    while True:
        time.sleep(3600)


def main():
    mode, truth_path = sys.argv[1], sys.argv[2]
    if mode == "thread":
        never = threading.Event()
        worker = threading.Thread(target=never.wait, name="worker")
        worker.start()
        groundtruth.write_json(truth_path, {"pid": os.getpid(), "worker": worker.name,
                                 "worker_native_id": getattr(worker, "native_id", None)})
    elif mode == "process":
        import multiprocessing
        child = multiprocessing.get_context("fork").Process(target=wait_for_ever)
        child.start()
        groundtruth.write_json(truth_path, {"pid": os.getpid(), "child_pid": child.pid})
    elif mode == "feeder":
        import multiprocessing
        unread = multiprocessing.Queue()
        unread.put(b"x" * (1 << 20))  # more than a pipe holds: the feeder blocks writing it
        feeder = None
        for _ in range(200):
            feeder = next((t for t in threading.enumerate() if t.name == "QueueFeederThread"), None)
            if feeder is not None:
                break
            time.sleep(0.05)
        groundtruth.write_json(truth_path, {
            "pid": os.getpid(), "worker": feeder.name, "daemon": feeder.daemon,
            "worker_native_id": getattr(feeder, "native_id", None)})
        globals()["kept_queue"] = unread  # not collected before the exit's finalizers run
    # The script ends here; the interpreter's exit waits for the worker or the child.


if __name__ == "__main__":
    main()
