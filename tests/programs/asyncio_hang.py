# -*- coding: utf-8 -*-
"""A hung asyncio service (Python 3.7+): one event loop in the main thread, idle in its selector,
and every task suspended for good:

  "main"              gather of the tasks below
  "request-handler"   handle_request -> fetch -> await a Future nobody sets
  "cycle-supervisor"  gather of three tasks, two of them in an await cycle:
    "lock-holder"       holds an asyncio.Lock and awaits the task "lock-waiter"
    "lock-waiter"       awaits that lock: neither can go on (a deadlock)
    "cycle-watcher"     awaits the task "lock-holder"
  "tg-root"           (3.11+) a TaskGroup tree three levels deep, named tg-1a, tg-1a-2a...,
                      whose leaves await an asyncio.Event nobody sets
  "executor-waiter"   awaits run_in_executor of a function blocked in the executor's thread
                      "hang-executor_0" on a threading.Event nobody sets
  "sleeper"           asyncio.sleep(3600)

Task names need 3.8 (before, tasks have none and are known by their address). The coroutines are
in asyncio_hang_tasks.py, since `async def` does not compile on Python 2; its docstring says what
the ground truth's "asyncio" section holds.
"""
import sys

import groundtruth


def main():
    path = groundtruth.output_path()
    if sys.version_info < (3, 7):
        groundtruth.skip(path, "asyncio.run, asyncio.all_tasks and create_task need Python 3.7")
    import asyncio_hang_tasks

    # The blockers: the main thread (announced once every task is suspended, then it waits in
    # the loop's selector) and the executor's thread.
    groundtruth.start(path, blockers=2)
    asyncio_hang_tasks.run()


if __name__ == "__main__":
    main()
