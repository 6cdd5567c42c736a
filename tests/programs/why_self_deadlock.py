# -*- coding: utf-8 -*-
"""Why-stuck scenario: a thread that deadlocks on its own Lock. A cache's `get` holds the cache's
threading.Lock (`with self._lock:`) and calls `_fill`, which takes the same lock again: a Lock is
not reentrant, so the thread ("refresher") waits for itself. Another thread only sleeps, and the
main thread joins the refresher. The one-thread deadlock is declared (expect_deadlock)."""
import threading
import time

import groundtruth


class Cache(object):
    def __init__(self):
        self._lock = threading.Lock()
        self._items = {}

    def get(self, key):
        with self._lock:
            if key not in self._items:
                self._fill(key)
            return self._items[key]

    def _fill(self, key):
        groundtruth.expect_wait("lock", self._lock, "self")
        groundtruth.expect_holds(self._lock)
        groundtruth.announce_blocking()
        with self._lock:  # WAITS: taken by get() above, in this same thread
            self._items[key] = len(key)


def idle():
    groundtruth.announce_blocking()
    time.sleep(3600)


def main():
    groundtruth.start(groundtruth.output_path(), blockers=3)
    cache = Cache()
    sleeper = threading.Thread(target=idle, name="sleeper")
    sleeper.daemon = True
    sleeper.start()
    refresher = threading.Thread(target=cache.get, args=("config",), name="refresher")
    groundtruth.expect(worker="refresher")
    groundtruth.expect_deadlock(refresher)
    refresher.start()
    groundtruth.announce_blocking()
    refresher.join()


if __name__ == "__main__":
    main()
