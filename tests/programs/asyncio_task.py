# -*- coding: utf-8 -*-
"""An asyncio task whose coroutine calls a blocking lock.acquire() (Python 3.5+ only)."""
import sys

import groundtruth


def main():
    path = groundtruth.output_path()
    if sys.version_info < (3, 5):
        groundtruth.skip(path, "asyncio coroutines need Python 3.5")
    import asyncio
    import blocking_coroutine

    groundtruth.start(path, blockers=1)
    task = blocking_coroutine.run_fetch_task(groundtruth.held_lock())
    if hasattr(asyncio, "run"):  # 3.7+
        asyncio.run(task)
    else:
        asyncio.new_event_loop().run_until_complete(task)


if __name__ == "__main__":
    main()
