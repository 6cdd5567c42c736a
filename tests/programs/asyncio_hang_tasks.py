# -*- coding: utf-8 -*-
"""The tasks of asyncio_hang.py (Python 3.7+), and the ground truth they write about themselves.

Once every task is suspended, a callback of the event loop (so that no task is running) writes,
through groundtruth.record_section, the "asyncio" section of the ground truth:

  {"loop_thread": "<ident of the thread running the loop>",
   "executor_thread": {"name": ..., "native_id": ..., "ident": "..."},
   "tasks": {"0x<address of the Task>": {
       "role": "lock-holder",            # the name this program gives it (also before 3.8)
       "name": "lock-holder" or null,    # Task.get_name(), 3.8+
       "done": false, "cancelled": false,
       "get_stack": [[file, line, function], ...],  # Task.get_stack(), outermost first: for a
                                                    # suspended task only its own coroutine's frame
       "coroutine_chain": [{"function", "qualname", "file", "line"}, ...],
                                         # innermost first: the task's coroutine and each
                                         # coroutine it awaits (cr_await), as capture_call_graph
                                         # walks them; qualname is the coroutine's __qualname__
       "awaits": {"kind": "task", "tasks": ["0x..."]},  # what this program made it wait for
       "known_awaited_by": ["0x...", ...],  # the tasks that await it (directly, through gather
                                            # or a TaskGroup), from what this program did
       "awaited_by": [...],              # 3.14+: from asyncio.capture_call_graph; before:
                                         # known_awaited_by
       "call_graph": {"call_stack": [[function, file, line], ...], "awaited_by": [...]},
       "formatted_call_graph": "..."     # these two 3.14+ only: capture/format_call_graph
   }},
   "cycles": [["0x<lock-holder>", "0x<lock-waiter>"]]}
"""
import asyncio
import os
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor

import groundtruth

EXECUTOR_THREAD_PREFIX = "hang-executor"
# A few rounds of the loop let every task reach its last await, and the executor's thread has to
# start; a loaded machine may take long, a broken scenario gives up after this.
SETTLE_TIMEOUT_SECONDS = 20.0
# Each round waits this long in the selector, so that the executor's thread can take the GIL.
SETTLE_POLL_SECONDS = 0.001
CHAIN_LIMIT = 100  # coroutines awaiting coroutines: far fewer here; a bound, not a guess

HAS_NAMES = sys.version_info >= (3, 8)
HAS_TASKGROUP = sys.version_info >= (3, 11)
HAS_CALL_GRAPH = sys.version_info >= (3, 14)

_roles = {}  # Task -> the name this program gives it
_awaits = {}  # role -> (kind, [roles of the tasks it awaits])
_never_set = threading.Event()  # the executor's function waits on it
_executor_blocking = threading.Event()


def spawn(coroutine, role, kind, awaited_roles=(), group=None):
    """A task named `role` (3.8+) running `coroutine`, created in TaskGroup `group` if given;
    records that it will wait for `kind`, on the tasks named `awaited_roles`."""
    if group is not None:
        task = group.create_task(coroutine, name=role)
    elif HAS_NAMES:
        task = asyncio.get_running_loop().create_task(coroutine, name=role)
    else:
        task = asyncio.get_running_loop().create_task(coroutine)
    _roles[task] = role
    _awaits[role] = (kind, list(awaited_roles))
    return task


# --- the request handler: two coroutines deep in a Future nobody sets ---

async def fetch(reply):
    return await reply  # never set


async def handle_request(reply):
    return await fetch(reply)


# --- the await cycle: lock-holder holds the lock and awaits lock-waiter, which awaits the lock ---

async def hold_lock_then_await(lock, tasks):
    async with lock:
        await tasks["lock-waiter"]  # waits for the lock this task holds


async def wait_for_lock(lock):
    async with lock:  # held by lock-holder
        pass


async def watch(task):
    await task


async def supervise_cycle():
    lock = asyncio.Lock()
    tasks = {}
    holder = spawn(hold_lock_then_await(lock, tasks), "lock-holder", "task", ["lock-waiter"])
    tasks["lock-waiter"] = spawn(wait_for_lock(lock), "lock-waiter", "lock")
    watcher = spawn(watch(holder), "cycle-watcher", "task", ["lock-holder"])
    await asyncio.gather(holder, tasks["lock-waiter"], watcher)


# --- a TaskGroup tree (3.11+): tg-root -> tg-1a, tg-1b -> tg-1a-2a... -> leaves on an Event ---

TASKGROUP_FANOUT = (2, 1, 2)  # children of each task at depth 0, 1, 2; depth 3 are the leaves


def taskgroup_children(role, depth):
    suffix = "%d" % (depth + 1)
    prefix = "tg" if role == "tg-root" else role
    return ["%s-%s%s" % (prefix, suffix, chr(ord("a") + i)) for i in range(TASKGROUP_FANOUT[depth])]


async def taskgroup_node(role, depth, never_set):
    if depth == len(TASKGROUP_FANOUT):
        await never_set.wait()
        return
    async with asyncio.TaskGroup() as group:
        for child in taskgroup_children(role, depth):
            last = depth + 1 == len(TASKGROUP_FANOUT)
            kind = "event" if last else "taskgroup"
            awaited = () if last else taskgroup_children(child, depth + 1)
            spawn(taskgroup_node(child, depth + 1, never_set), child, kind, awaited, group=group)


# --- run_in_executor blocked in the executor's thread, and a long sleep ---

def block_in_executor():
    groundtruth.expect_wait("event", _never_set)
    groundtruth.announce_blocking()
    _executor_blocking.set()
    _never_set.wait()  # nobody sets it: never returns


async def await_executor(executor):
    await asyncio.get_running_loop().run_in_executor(executor, block_in_executor)


async def sleep_long():
    await asyncio.sleep(3600)


# --- the ground truth ---

def hex_address(task):
    return "0x%x" % id(task)  # CPython's id() is the object's address


def coroutine_chain(task):
    """The task's coroutine and those it awaits, innermost first, as capture_call_graph walks
    them (following cr_await while it is a coroutine)."""
    coroutine = task.get_coro() if hasattr(task, "get_coro") else task._coro
    chain = []
    while coroutine is not None and hasattr(coroutine, "cr_await") and len(chain) < CHAIN_LIMIT:
        frame = coroutine.cr_frame
        if frame is None:
            break
        chain.append({"function": frame.f_code.co_name, "qualname": coroutine.__qualname__,
                      "file": frame.f_code.co_filename, "line": frame.f_lineno})
        coroutine = coroutine.cr_await
    chain.reverse()
    return chain


def frame_triple(frame):
    return [frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name]


def call_graph_of(task):
    """capture_call_graph (3.14+): the call stack innermost first, and the awaiting tasks."""
    graph = asyncio.capture_call_graph(task)
    stack = [[entry.frame.f_code.co_name, entry.frame.f_code.co_filename, entry.frame.f_lineno]
             for entry in graph.call_stack]
    return {"call_stack": stack,
            "awaited_by": sorted(hex_address(parent.future) for parent in graph.awaited_by)}


def describe_tasks(loop, executor_thread):
    tasks = asyncio.all_tasks(loop)
    by_role = dict((role, task) for task, role in _roles.items())
    unknown = [task for task in tasks if task not in _roles]
    if unknown or len(tasks) != len(_roles):
        raise RuntimeError("tasks %r are not the ones this program made (%r)" % (tasks, _roles))
    awaited_by = dict((role, []) for role in by_role)
    for role, (_, awaited_roles) in _awaits.items():
        for awaited in awaited_roles:
            awaited_by[awaited].append(hex_address(by_role[role]))
    described = {}
    for task in tasks:
        role = _roles[task]
        kind, awaited_roles = _awaits[role]
        entry = {
            "role": role,
            "name": task.get_name() if HAS_NAMES else None,
            "done": task.done(),
            "cancelled": task.cancelled(),
            "get_stack": [frame_triple(frame) for frame in task.get_stack()],
            "coroutine_chain": coroutine_chain(task),
            "awaits": {"kind": kind, "tasks": [hex_address(by_role[r]) for r in awaited_roles]},
            "known_awaited_by": sorted(awaited_by[role]),
        }
        entry["awaited_by"] = entry["known_awaited_by"]
        if HAS_CALL_GRAPH:
            entry["call_graph"] = call_graph_of(task)
            entry["awaited_by"] = entry["call_graph"]["awaited_by"]
            entry["formatted_call_graph"] = asyncio.format_call_graph(task)
        described[hex_address(task)] = entry
    return {
        "loop_thread": str(threading.get_ident()),
        "executor_thread": {"name": executor_thread.name, "ident": str(executor_thread.ident),
                            "native_id": getattr(executor_thread, "native_id", None)},
        "tasks": described,
        "cycles": [[hex_address(by_role["lock-holder"]), hex_address(by_role["lock-waiter"])]],
    }


def fail(message):
    """End the process at once: a raise would leave it hanging (the loop logs what a callback
    raises; the executor's thread, blocked for good, keeps the process from exiting)."""
    sys.stderr.write(message)
    sys.stderr.flush()
    os._exit(3)


def write_ground_truth(loop):
    """Runs as a callback of the loop, when every task is suspended."""
    try:
        record_ground_truth(loop)
    except Exception:
        fail(traceback.format_exc())
    # The loop goes back to its selector and waits there for good: nothing is ready, the next
    # timer is the sleeper's hour.
    groundtruth.expect_wait("select", loop)
    groundtruth.announce_blocking()


def record_ground_truth(loop):
    if not all(task._fut_waiter is not None for task in asyncio.all_tasks(loop)):
        raise RuntimeError("a task is not suspended on a future")
    executor_threads = [thread for thread in threading.enumerate()
                        if thread.name.startswith(EXECUTOR_THREAD_PREFIX)]
    if len(executor_threads) != 1:
        raise RuntimeError("executor threads %r, want one" % executor_threads)
    groundtruth.record_section("asyncio", describe_tasks(loop, executor_threads[0]))


def all_suspended(current):
    """Every task but `current` waits on a future (the task's _fut_waiter, in C and Python)."""
    others = [task for task in asyncio.all_tasks() if task is not current]
    return (len(others) + 1 == len(_roles)
            and all(task._fut_waiter is not None for task in others))


async def main(executor):
    current = asyncio.current_task()
    _roles[current] = "main"
    if HAS_NAMES:
        current.set_name("main")
    reply = asyncio.get_running_loop().create_future()  # nobody sets it
    children = [
        spawn(handle_request(reply), "request-handler", "future"),
        spawn(supervise_cycle(), "cycle-supervisor", "gather",
              ["lock-holder", "lock-waiter", "cycle-watcher"]),
    ]
    if HAS_TASKGROUP:
        never_set = asyncio.Event()
        children.append(spawn(taskgroup_node("tg-root", 0, never_set), "tg-root", "taskgroup",
                              taskgroup_children("tg-root", 0)))
    children.append(spawn(await_executor(executor), "executor-waiter", "executor"))
    children.append(spawn(sleep_long(), "sleeper", "sleep"))
    _awaits["main"] = ("gather", [_roles[task] for task in children])
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_TIMEOUT_SECONDS
    while not (_executor_blocking.is_set() and all_suspended(current)):
        if loop.time() > deadline:
            raise RuntimeError("the tasks did not all reach their last await")
        await asyncio.sleep(SETTLE_POLL_SECONDS)
    # Written by the next round of the loop, once this task waits in the gather.
    loop.call_soon(write_ground_truth, loop)
    await asyncio.gather(*children)


def run():
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=EXECUTOR_THREAD_PREFIX)
    try:
        asyncio.run(main(executor))
    except BaseException:
        fail(traceback.format_exc())
