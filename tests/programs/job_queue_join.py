"""Two processes that wait for each other through a multiprocessing.Queue (tests/integration/
test_jobs.py): a child puts more on a queue than its pipe holds and returns; its exit waits for
the queue's feeder thread to flush, which blocks writing until someone reads; the parent joins
the child before it reads the queue. The pitfall multiprocessing's programming guidelines warn
of ("joining processes that use queues").

    python3 job_queue_join.py READY_DIR

The parent writes READY_DIR/parent-PID.ready (its ground truth as JSON: the child's pid) just
before join(), marked PARENT-JOINS; the child writes READY_DIR/child-PID.ready before it returns.
Python 3."""
import json
import multiprocessing
import os
import sys

PUT_BYTES = 1 << 20  # more than a pipe holds (64 KiB on Linux)


def write_truth(ready_dir, name, truth):
    path = os.path.join(ready_dir, "%s-%d.ready" % (name, os.getpid()))
    with open(path + ".tmp", "w") as out:
        json.dump(truth, out)
    os.rename(path + ".tmp", path)


def produce(results, ready_dir):
    results.put(b"x" * PUT_BYTES)
    write_truth(ready_dir, "child", {"parent_pid": os.getppid(), "waits_in": "feeder"})


def main(ready_dir):
    results = multiprocessing.Queue()
    producer = multiprocessing.Process(target=produce, args=(results, ready_dir))
    producer.start()
    write_truth(ready_dir, "parent", {"child_pid": producer.pid, "waits_in": "join"})
    producer.join()  # PARENT-JOINS
    print(len(results.get()))


if __name__ == "__main__":
    main(sys.argv[1])
