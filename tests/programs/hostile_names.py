"""A process whose names are hostile, for issue 22: every string hangpy shows of it is one the
process chose. Threads block with code whose file names are /dev/zero (endless), a FIFO (an
open that never returns), a file its own user may not read (when started as another user), and
a climb out of any --sysroot; a thread's name and a function's name carry terminal escapes
(retitle the window, clear the screen, move the cursor).

    python3 hostile_names.py TRUTH_JSON FIFO_PATH SECRET_PATH

Writes TRUTH_JSON ({"pid", "threads": {name: file}}) once every thread blocks. Python 3.8+
(CodeType.replace)."""
import json
import os
import sys
import threading

ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b[1A\x9b31m"


def blocking_code(filename):
    """A function whose code says it comes from `filename`, line 1, and blocks there."""
    namespace = {}
    exec(compile("def wait(event):\n    event.wait()\n", filename, "exec"), namespace)
    return namespace["wait"]


def main():
    truth_path, fifo_path, secret_path = sys.argv[1:4]
    event = threading.Event()
    files = {"zero": "/dev/zero", "fifo": fifo_path, "secret": secret_path,
             "climb": "/../../../../.." + secret_path}
    threads = []
    for name, filename in sorted(files.items()):
        thread = threading.Thread(target=blocking_code(filename), args=(event,), name=name, daemon=True)
        threads.append(thread)
    escaped = blocking_code("/nonexistent/escapes.py")
    escaped.__code__ = escaped.__code__.replace(co_name="wait" + ESCAPES, co_qualname="wait" + ESCAPES) \
        if sys.version_info >= (3, 11) else escaped.__code__.replace(co_name="wait" + ESCAPES)
    threads.append(threading.Thread(target=escaped, args=(event,), name="evil" + ESCAPES, daemon=True))
    for thread in threads:
        thread.start()
    tmp = truth_path + ".tmp"
    with open(tmp, "w") as out:
        json.dump({"pid": os.getpid(), "threads": dict((t.name, None) for t in threads), "files": files}, out)
    os.rename(tmp, truth_path)
    event.wait()


if __name__ == "__main__":
    main()
