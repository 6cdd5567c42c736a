# -*- coding: utf-8 -*-
"""Why-stuck scenario: the main thread in subprocess.Popen(...).wait() for a child that reads its
stdin until EOF (it ends when this process dies), a thread waiting on a threading.Event."""
import subprocess
import sys
import threading

import groundtruth

never = threading.Event()


def wait_event():
    groundtruth.announce_blocking()
    never.wait()


def main():
    groundtruth.start(groundtruth.output_path(), blockers=2)
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    groundtruth.expect(child_pid=child.pid)
    waiter = threading.Thread(target=wait_event, name="event-waiter")
    waiter.daemon = True
    waiter.start()
    groundtruth.announce_blocking()
    child.wait()


if __name__ == "__main__":
    main()
