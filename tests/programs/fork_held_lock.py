"""A fork while another thread holds a lock (issue 21): thread "cache-filler" takes `cache_lock`
with `with` and keeps it; the main thread forks; the child, which has no "cache-filler", waits
for the lock for ever (the line marked CHILD-WAITS); the parent waits for the child.

    python fork_held_lock.py TRUTH_JSON

Before either blocks, the parent writes TRUTH_JSON, the cause as the interpreter knows it:
{"parent_pid", "child_pid", "lock": "0x..." (id of the lock, the same address in the child),
 "holder": "cache-filler", "holder_native_id" (3.8 on), "child_line"}; the child writes
TRUTH_JSON.child once it is about to take the lock."""
import os
import sys

import groundtruth  # tests/programs/groundtruth.py: marker lines, atomic JSON
import threading
import time

cache_lock = threading.Lock()
filled = threading.Event()


def fill_cache():
    with cache_lock:  # HOLDER-HOLDS
        filled.set()
        while True:
            time.sleep(3600)


def use_cache(truth_path):
    with open(truth_path + ".child", "w") as out:
        out.write(str(os.getpid()))
    with cache_lock:  # CHILD-WAITS
        pass


def main():
    truth_path = sys.argv[1]
    holder = threading.Thread(target=fill_cache, name="cache-filler")
    holder.daemon = True
    holder.start()
    filled.wait()
    child = os.fork()
    if child == 0:
        use_cache(truth_path)
        os._exit(0)
    truth = {"parent_pid": os.getpid(), "child_pid": child, "lock": "0x%x" % id(cache_lock),
             "holder": holder.name, "holder_native_id": getattr(holder, "native_id", None),
             "child_line": groundtruth.marker_line(__file__, "CHILD-WAITS")}
    groundtruth.write_json(truth_path, truth)
    os.waitpid(child, 0)


if __name__ == "__main__":
    main()
