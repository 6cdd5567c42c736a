# -*- coding: utf-8 -*-
"""Two interpreters in one process (3.12 on): the main thread blocks in the main interpreter; a
runner thread creates a subinterpreter and runs code in it that starts a thread which blocks.
Once both block, a reporter thread writes sys._current_frames() (which covers every interpreter
since 3.12) for the two threads whose ident no other thread state shares, with each one's
interpreter: the main thread (interpreter 0) and the subinterpreter's worker."""
import json
import os
import sys
import threading
import time
import traceback

try:
    import _interpreters as interpreters  # 3.13 on
except ImportError:
    try:
        import _xxsubinterpreters as interpreters  # 3.12
    except ImportError:
        interpreters = None

SUBINTERPRETER_CODE = """
import threading
def wait_in_subinterpreter():
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()  # never returns
worker = threading.Thread(target=wait_in_subinterpreter, name="sub-worker")
worker.start()
worker.join()
"""


def write(path, document):
    with open(path + ".tmp", "w") as stream:
        json.dump(document, stream, indent=1)
    os.rename(path + ".tmp", path)


def run_subinterpreter():
    interpreter = interpreters.create()
    interpreters.run_string(interpreter, SUBINTERPRETER_CODE)


def report(path, main_ident, runner_ident):
    time.sleep(1.0)  # both threads reach their blocking call
    frames = sys._current_frames()
    threads = {}
    for ident, frame in frames.items():
        if ident == runner_ident or ident == threading.get_ident():
            continue  # the runner has a thread state in both interpreters: ambiguous here
        interpreter = 0 if ident == main_ident else None
        summary = traceback.extract_stack(frame)
        threads[str(ident)] = {"interpreter": interpreter,
                               "frames": [[entry[0], entry[1], entry[2]] for entry in summary]}
    write(path, {"pid": os.getpid(), "threads": threads})


def main():
    path = sys.argv[1]
    if interpreters is None or sys.version_info < (3, 12):
        write(path, {"skip": "no subinterpreters module before 3.12", "pid": os.getpid()})
        return
    runner = threading.Thread(target=run_subinterpreter, name="runner")
    runner.start()
    reporter = threading.Thread(target=report, args=(path, threading.get_ident(), runner.ident))
    reporter.start()
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()  # never returns


if __name__ == "__main__":
    main()
