"""A thread 100,010 Python frames deep (issue 35): one function recursing at one line, then
blocking. A report must fold the run as Python's tracebacks do, keep the walker's note that the
chain is longer than it reads, and stay small and quick (triage included).

    python3 very_deep.py TRUTH_JSON [DEPTH]

Writes TRUTH_JSON ({"pid", "file", "line", "depth"}) just before it blocks. Python 3.11+: calls
between Python functions no longer use the C stack there."""
import json
import os
import sys
import threading

RECURSES = None  # the line of the recursive call, set below


def down(depth, event, truth_path):
    if depth == 0:
        with open(truth_path + ".tmp", "w") as out:
            json.dump({"pid": os.getpid(), "file": os.path.abspath(__file__), "line": RECURSES,
                       "depth": int(sys.argv[2]) if len(sys.argv) > 2 else 100010}, out)
        os.rename(truth_path + ".tmp", truth_path)
        event.wait()
        return 0
    return down(depth - 1, event, truth_path) + 1  # RECURSES


def main():
    global RECURSES
    with open(__file__) as source:
        RECURSES = next(n for n, text in enumerate(source, 1) if text.rstrip().endswith("# RECURSES"))
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 100010
    sys.setrecursionlimit(depth + 1000)
    down(depth, threading.Event(), sys.argv[1])


if __name__ == "__main__":
    main()
