"""A process for the PID-namespace tests (tests/integration/test_pid_namespace.py), run under
`unshare --fork --pid --mount-proc`, as a container's process is: its threads' ids are the
namespace's. A "sleeper" thread asleep in time.sleep, a "churner" thread that recurses and
returns for ever (its frames change under a reader that does not stop it), and the main thread
waiting on an Event.

    python3 namespaced_threads.py TRUTH_PATH

TRUTH_PATH gets, once every thread runs, the ids the interpreter itself gives: the process's pid
and each thread's native id, as seen inside the namespace. Python 3.8 on (threading.get_native_id)."""
import json
import os
import sys
import threading
import time


def sleeper():
    time.sleep(3600)  # SLEEPER-SLEEPS


def descend(depth):
    if depth == 0:
        return 0
    return descend(depth - 1) + 1


def churner():
    while True:
        descend(40)  # CHURNER-RUNS


def main(truth_path):
    ids = {}
    started = threading.Event()
    for target, name in ((sleeper, "sleeper"), (churner, "churner")):
        def run(target=target, name=name):
            ids[name] = threading.get_native_id()
            if len(ids) == 2:
                started.set()
            target()
        threading.Thread(target=run, name=name, daemon=True).start()
    started.wait()
    truth = {"pid": os.getpid(), "threads": dict(ids, MainThread=threading.get_native_id())}
    with open(truth_path + ".tmp", "w") as out:
        json.dump(truth, out)
    os.rename(truth_path + ".tmp", truth_path)
    threading.Event().wait()  # MAIN-WAITS


if __name__ == "__main__":
    main(sys.argv[1])
