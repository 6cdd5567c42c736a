"""A process whose frames name files as an attacker would (issue 35): every file name below is one
its code was compiled with, and a report that quoted "source lines" from them would show the
analyst's own secrets, or read without end. Threads block in code whose file names are
/proc/self/environ and /proc/self/status (the reader's own environment and name, if read),
/proc/self/cwd/analyst_notes.py (a file in the reader's working directory, through a magic
link), this interpreter's binary (no source), /dev/tty (a device: opening one can act), and one
thread runs through SPELLINGS frames naming one big source file of the standard library by as
many spellings ("/usr/lib/python3.11/./././pydoc_data/topics.py"), none of them a file the
program made. A last thread's name and function carry Unicode's direction overrides and
isolates (the Trojan Source trick: "check_admin" shown reversed).

    python3 hostile_sources.py TRUTH_JSON SPELLINGS

Python 3.11+ (co_qualname).

Writes TRUTH_JSON ({"pid", "threads": {name: file}, "big_source", "spellings", "bidi_thread",
"bidi_function"}) once every thread blocks."""
import functools
import json
import os
import sys
import threading

BIG_SOURCE = os.path.join(os.path.dirname(os.__file__), "pydoc_data", "topics.py")
BIDI_THREAD = "bidi\u202enimda_kcehc\u202c"
BIDI_FUNCTION = "\u2066wait\u2069\u200b"


def blocking_code(filename, function="wait"):
    """A function whose code says it comes from `filename`, line 1, and blocks there."""
    namespace = {}
    exec(compile("def %s(event): event.wait()\n" % function, filename, "exec"), namespace)
    return namespace[function]


def step_code(filename):
    """A function from `filename` (line 1) that calls the next link of the chain."""
    namespace = {}
    exec(compile("def step(event, rest): rest[0](event)\n", filename, "exec"), namespace)
    return namespace["step"]


def spelled(index):
    """The big file's path with `index` "./" steps before its last two parts: one file, many names."""
    directory, name = os.path.split(BIG_SOURCE)
    parent, last = os.path.split(directory)
    return "%s/%s%s/%s" % (parent, "./" * index, last, name)


def chain(event, count):
    """`count` frames, each from another spelling of BIG_SOURCE, the innermost one waiting."""
    call = blocking_code(spelled(count - 1))
    for index in range(count - 2, -1, -1):
        call = functools.partial(step_code(spelled(index)), rest=(call,))
    call(event)


def main():
    truth_path, spellings = sys.argv[1], int(sys.argv[2])
    sys.setrecursionlimit(spellings * 3 + 1000)
    threading.stack_size(64 << 20)
    event = threading.Event()
    files = {"environ": "/proc/self/environ", "status": "/proc/self/status",
             "cwd": "/proc/self/cwd/analyst_notes.py", "binary": os.path.realpath(sys.executable),
             "tty": "/dev/tty"}
    threads = [threading.Thread(target=blocking_code(path), args=(event,), name=name, daemon=True)
               for name, path in sorted(files.items())]
    threads.append(threading.Thread(target=chain, args=(event, spellings), name="spellings", daemon=True))
    # No source compiles with these characters in a name: the code object is renamed.
    bidi = blocking_code("/nonexistent/bidi.py")
    bidi.__code__ = bidi.__code__.replace(co_name=BIDI_FUNCTION, co_qualname=BIDI_FUNCTION)
    threads.append(threading.Thread(target=bidi, args=(event,), name=BIDI_THREAD, daemon=True))
    for thread in threads:
        thread.start()
    tmp = truth_path + ".tmp"
    with open(tmp, "w") as out:
        json.dump({"pid": os.getpid(), "threads": dict((t.name, files.get(t.name)) for t in threads),
                   "big_source": BIG_SOURCE, "spellings": spellings, "bidi_thread": BIDI_THREAD,
                   "bidi_function": BIDI_FUNCTION}, out)
    os.rename(tmp, truth_path)
    event.wait()


if __name__ == "__main__":
    main()
