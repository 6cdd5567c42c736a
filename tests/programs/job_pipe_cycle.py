"""Two processes that wait for each other through a pipe (tests/integration/test_jobs.py): a parent
starts a child with its output on a pipe and waits for it to exit before it reads the pipe; the
child writes more than the pipe holds and blocks in write() until someone reads. The classic
`Popen.wait()` with stdout=PIPE deadlock (subprocess's documentation warns of it).

    python3 job_pipe_cycle.py READY_DIR

The parent writes READY_DIR/parent-PID.ready (its ground truth as JSON: the child's pid, the
line it waits at) just before wait(), marked PARENT-WAITS; the child writes
READY_DIR/child-PID.ready before its write, marked CHILD-WRITES. Python 3."""
import json
import os
import subprocess
import sys

CHILD_BYTES = 1 << 20  # more than a pipe holds (64 KiB on Linux)


def write_truth(ready_dir, name, truth):
    path = os.path.join(ready_dir, "%s-%d.ready" % (name, os.getpid()))
    with open(path + ".tmp", "w") as out:
        json.dump(truth, out)
    os.rename(path + ".tmp", path)


def child(ready_dir):
    write_truth(ready_dir, "child", {"parent_pid": os.getppid(), "waits_in": "write",
                                     "reader_pid": os.getppid()})
    sys.stdout.write("x" * CHILD_BYTES)  # CHILD-WRITES
    sys.stdout.flush()


def parent(ready_dir):
    report = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", ready_dir],
                              stdout=subprocess.PIPE)
    write_truth(ready_dir, "parent", {"child_pid": report.pid, "waits_in": "wait"})
    report.wait()  # PARENT-WAITS
    print(len(report.stdout.read()))


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        parent(sys.argv[1])
