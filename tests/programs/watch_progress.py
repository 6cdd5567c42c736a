"""Processes that move slowly, spin, come and go, or hang after a while, for coreanalyze watch's
tests (tests/integration/test_watch.py).

    python3 watch_progress.py MODE READY_DIR

MODE slow: one step every STEP_SECONDS, asleep on the same line each time (no CPU, no I/O: only
the loop's `step` moves on), which must never be called stuck.
MODE spin: a pure Python loop in one frame at 100% of a CPU: busy, not stuck.
MODE workers: a parent that starts a short-lived worker process after another and waits for each.
MODE hangs-later: steps in changing frames for HANG_AFTER seconds, then a lock acquired twice.
MODE heartbeat: the same hang of the main thread, while a thread named "heartbeat" writes a line
and counts every 0.2 s for ever (a job's metrics or liveness thread).
MODE join: a multiprocessing parent in join() over two worker processes that step on (a
counter, in changing frames) for ever: the parent is still, its children move.
MODE regex: a regular expression that backtracks for ever, in C (sre), in the main thread: with
the process put on one CPU among CPU-bound processes, it spins while getting a small share.
Each writes READY_DIR/started when it starts; hangs-later writes READY_DIR/hung (the time, then the
function it blocks in) just before it blocks, its ground truth."""
import os
import subprocess
import sys
import threading
import time

STEP_SECONDS = 1.5
HANG_AFTER = 3.0


def write(ready_dir, name, text):
    path = os.path.join(ready_dir, name)
    with open(path + ".tmp", "w") as out:
        out.write(text)
    os.rename(path + ".tmp", path)


def slow(ready_dir):
    write(ready_dir, "started", str(time.time()))
    for step in range(10 ** 6):
        time.sleep(STEP_SECONDS)  # the same line at every look


def spin(ready_dir):
    write(ready_dir, "started", str(time.time()))
    total = 0
    while True:
        total += 1


def workers(ready_dir):
    write(ready_dir, "started", str(time.time()))
    for count in range(10 ** 6):
        worker = subprocess.Popen([sys.executable, __file__, "worker", ready_dir])
        worker.wait()


def worker(ready_dir):
    write(ready_dir, "worker-%d" % os.getpid(), str(time.time()))
    time.sleep(0.8)


def step_a(number):
    time.sleep(0.05)
    return number + 1


def step_b(number):
    time.sleep(0.07)
    return number * 2 % 1000


def wait_forever(ready_dir):
    lock = threading.Lock()
    lock.acquire()
    write(ready_dir, "hung", "%r\nwait_forever\n" % time.time())
    lock.acquire()  # WATCH-HANGS-HERE


def hangs_later(ready_dir):
    write(ready_dir, "started", str(time.time()))
    value, deadline = 1, time.time() + HANG_AFTER
    while time.time() < deadline:
        value = step_b(step_a(value))
    wait_forever(ready_dir)


def heartbeat(ready_dir):
    def beat():
        beats = 0
        with open(os.path.join(ready_dir, "beats.log"), "a") as log:
            while True:
                beats += 1
                log.write("beat %d\n" % beats)
                log.flush()
                time.sleep(0.2)  # HEARTBEAT-TICKS
    threading.Thread(target=beat, name="heartbeat", daemon=True).start()
    write(ready_dir, "started", str(time.time()))
    time.sleep(1.0)
    wait_forever(ready_dir)


def stepping_worker():
    value = 1
    while True:
        value = step_b(step_a(value))


def join(ready_dir):
    import multiprocessing
    workers = [multiprocessing.Process(target=stepping_worker) for _ in range(2)]
    for worker in workers:
        worker.start()
    write(ready_dir, "started", str(time.time()))
    for worker in workers:
        worker.join()  # PARENT-JOINS


def regex(ready_dir):
    import re
    write(ready_dir, "started", str(time.time()))
    re.match(r"(a+)+$", "a" * 64 + "b")  # REGEX-BACKTRACKS


if __name__ == "__main__":
    {"slow": slow, "spin": spin, "workers": workers, "worker": worker,
     "hangs-later": hangs_later, "heartbeat": heartbeat, "regex": regex, "join": join}[sys.argv[1]](sys.argv[2])
