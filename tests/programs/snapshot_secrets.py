"""Secrets placed where an analysis reads next to them, for tests/integration/test_snapshot_privacy.py.

    python snapshot_secrets.py READY_PATH

Three secrets, given in the environment, each a marker no analysis has a reason to read:
- HANGPY_PRIVACY_ENV: only read into os.environ (CPython's str copies on the heap);
- HANGPY_PRIVACY_HEAP: copied into strings of many sizes, allocated between the objects the
  analysis reads (each blocked thread's code object, its names, its frame, its thread state), and
  kept alive in a function attribute (no frame's local, so not even --locals shows them);
- HANGPY_PRIVACY_LOCAL: an argument and a local of every blocked frame: read with --locals only.
- HANGPY_PRIVACY_CUT: at character 3,000 of a 5,000-character argument of every blocked frame:
  --locals shows the first 1,024 characters of its repr only, so it must read no further.

Four threads block in Event.wait (3 of them in frames compiled here, between the heap secrets)
and the main thread in join; READY_PATH gets the threads' stacks from sys._current_frames()
once they all block. Runs on 2.7 and 3.x.
"""
import json
import os
import sys
import threading
import time
import traceback

SIZES = (1, 7, 24, 60, 120, 250, 500, 1000, 3000, 9000)


def heap_neighbours(secret, tag):
    """Strings holding `secret`, of sizes that land in most of the allocator's size classes."""
    made = []
    for size in SIZES:
        for copy in range(4):
            made.append("%s-%s-%d-%d-%s" % (secret, tag, size, copy, "n" * size))
    return made


def keep(objects):
    keep.alive.extend(objects)


keep.alive = []

BLOCKER_SOURCE = """
def blocked_%(n)d(event, token, long_text):
    local_copy = token + "-local-%(n)d"
    event.wait()
    return local_copy
"""


def make_blocker(n, heap_secret):
    keep(heap_neighbours(heap_secret, "before-code-%d" % n))
    namespace = {}
    code = compile(BLOCKER_SOURCE % {"n": n}, __file__, "exec")
    keep(heap_neighbours(heap_secret, "after-code-%d" % n))
    exec(code, namespace)
    keep(heap_neighbours(heap_secret, "after-function-%d" % n))
    return namespace["blocked_%d" % n]


def wait_until_blocked(threads):
    """Every thread's innermost Python frame sits in Event.wait or a lock acquire."""
    deadline = time.time() + 30
    while time.time() < deadline:
        frames = sys._current_frames()
        ready = all(t.ident in frames and frames[t.ident].f_code.co_name in ("wait", "_wait_for_tstate_lock")
                    for t in threads)
        if ready:
            return
        time.sleep(0.02)
    raise SystemExit("threads did not block")


def long_text(n):
    """5,000 characters, the secret at character 3,000: past what a repr of it shows."""
    return "%d" % n + "x" * 2999 + os.environ["HANGPY_PRIVACY_CUT"] + "y" * 2000


def start_blockers(event, local_secret):
    """The blocked threads, made between the heap secrets (which no frame left on a stack holds,
    so --locals does not show them either)."""
    heap_secret = os.environ["HANGPY_PRIVACY_HEAP"]
    threads = []
    for n in range(3):
        function = make_blocker(n, heap_secret)
        thread = threading.Thread(target=function, args=(event, local_secret, long_text(n)),
                                  name="blocker-%d" % n)
        keep(heap_neighbours(heap_secret, "before-start-%d" % n))
        thread.start()
        keep(heap_neighbours(heap_secret, "after-start-%d" % n))
        threads.append(thread)
    return threads


def main():
    ready_path = sys.argv[1]
    local_secret = os.environ["HANGPY_PRIVACY_LOCAL"]
    event = threading.Event()
    threads = start_blockers(event, local_secret)
    wait_until_blocked(threads)
    keep(heap_neighbours(os.environ["HANGPY_PRIVACY_HEAP"], "after-blocked"))
    frames = sys._current_frames()
    truth = {threading.current_thread().name: None}  # the main thread: moves on to join
    for thread in threads:
        truth[thread.name] = [[f[0], f[1], f[2]] for f in traceback.extract_stack(frames[thread.ident])]
    with open(ready_path + ".tmp", "w") as stream:
        json.dump({"pid": os.getpid(), "threads": truth}, stream)
    os.rename(ready_path + ".tmp", ready_path)
    for thread in threads:
        thread.join()  # BLOCKS: the event is never set


if __name__ == "__main__":
    main()
