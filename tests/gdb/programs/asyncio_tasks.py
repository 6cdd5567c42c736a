# -*- coding: utf-8 -*-
"""asyncio tasks stuck in the ways issue 12 names, and the program's own view of them.

The event loop runs in the main thread and every task ends up suspended: a handler awaiting a
Future never set (through a second coroutine), two tasks deadlocked on an asyncio.Lock (the
holder awaits the waiter), asyncio.sleep(3600), run_in_executor blocked in a thread, a gather of
a sleep and a Future, and from 3.11 a TaskGroup three levels deep. A reporter thread then writes,
atomically, the ground truth asyncio itself gives:

  {"pid": ..., "version": "X.Y.Z", "reporter_native_id": ..., "os_threads": [...],
   "threads": {"<ident>": {}},  # the threads left once the reporter is gone (for the test's wait)
   "tasks": [{"address": id(task), "name": task.get_name() (3.8+) or null,
              "done": task.done(),
              # each coroutine of the chain task._coro -> cr_await -> ..., innermost first:
              "coroutines": [[file, line, co_name, __qualname__], ...]}],
   # [awaiting task, awaited task]: the Task a task's _fut_waiter is, the children of the
   # gather it waits for, the tasks of the TaskGroup whose __aexit__ it is suspended in
   "edges": [[address, address], ...],
   "roles": {"request-handler": address, ...}}  # the task this program made for each role

and exits. Before 3.7 (no asyncio.all_tasks, no get_running_loop) it writes {"skip": ...}.
Runs with the interpreter under test: no f-strings, stdlib only.
"""
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "programs"))
import groundtruth  # noqa: E402

# Long enough for every task to reach its await and the loop to enter epoll_wait.
SETTLE_SECONDS = 0.5


def coroutine_chain(coroutine):
    """[file, line, co_name, __qualname__] of each suspended coroutine, innermost first."""
    chain = []
    while coroutine is not None and getattr(coroutine, "cr_frame", None) is not None:
        frame = coroutine.cr_frame
        chain.append([frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name,
                      getattr(coroutine, "__qualname__", frame.f_code.co_name)])
        coroutine = coroutine.cr_await
    chain.reverse()
    return chain


def awaited_tasks(task):
    """The tasks `task` waits for, as asyncio's own objects say."""
    import asyncio
    waiter = task._fut_waiter
    if isinstance(waiter, asyncio.Task):
        return [waiter]
    children = getattr(waiter, "_children", None)  # asyncio.gather's _GatheringFuture
    if children is not None:
        return [child for child in children if isinstance(child, asyncio.Task)]
    chain = []
    coroutine = task._coro
    while coroutine is not None and getattr(coroutine, "cr_frame", None) is not None:
        chain.append(coroutine)
        coroutine = coroutine.cr_await
    if chain:
        group = chain[-1].cr_frame.f_locals.get("self")
        if type(group).__name__ == "TaskGroup":
            return list(group._tasks)
    return []


def write_truth(path, loop, roles):
    import asyncio
    time.sleep(SETTLE_SECONDS)
    tasks = []
    edges = []
    for task in asyncio.all_tasks(loop):
        edges += [[id(task), id(other)] for other in awaited_tasks(task)]
        tasks.append({
            "address": id(task),
            "name": task.get_name() if hasattr(task, "get_name") else None,
            "done": task.done(),
            "coroutines": coroutine_chain(task._coro),
        })
    document = {
        "pid": os.getpid(),
        "version": "%d.%d.%d" % tuple(sys.version_info[:3]),
        "reporter_native_id": groundtruth.current_native_id(),
        "os_threads": sorted(int(task) for task in os.listdir("/proc/self/task")),
        "threads": dict((str(thread.ident), {}) for thread in threading.enumerate()
                        if thread is not threading.current_thread()),
        "tasks": tasks,
        "edges": edges,
        "roles": dict((role, id(task)) for role, task in roles.items()),
    }
    temporary = path + ".tmp"
    with open(temporary, "w") as out:
        json.dump(document, out)
    os.rename(temporary, path)


def main():
    path = groundtruth.output_path()
    if sys.version_info < (3, 7):
        groundtruth.skip(path, "asyncio.all_tasks and get_running_loop need Python 3.7")
    # `async def` is a syntax error before 3.5: the coroutines live in a module of their own.
    import asyncio_scenario
    asyncio_scenario.run(path, write_truth)


if __name__ == "__main__":
    main()
