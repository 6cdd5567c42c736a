"""A process that runs exec of its own interpreter on itself again and again (issue 35): a reader
of its memory sees it change under it, the same pid, binary and start time each time. Every
generation sleeps INTERVAL seconds, then execs.

    python3 reexec_loop.py INTERVAL [GENERATION]
"""
import os
import sys
import time


def main():
    interval = float(sys.argv[1])
    generation = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    time.sleep(interval)
    os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), sys.argv[1], str(generation + 1)])


if __name__ == "__main__":
    main()
