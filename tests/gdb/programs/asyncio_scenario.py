# -*- coding: utf-8 -*-
"""The coroutines of asyncio_tasks.py (Python 3.7+ only: `async def`); see there."""
import asyncio
import concurrent.futures
import sys
import threading


def run(path, write_truth):
    """Starts the tasks and runs the loop forever; a thread calls write_truth(path, loop, roles)
    once they are all suspended."""
    blocker_event = threading.Event()

    def blocking():
        blocker_event.wait()

    async def fetch(future):
        return await future

    async def handler(future):
        return await fetch(future)

    async def holder(lock, box):
        async with lock:
            await asyncio.sleep(0.05)
            await box[0]

    async def waiter(lock):
        async with lock:
            pass

    async def in_executor(loop, executor):
        await loop.run_in_executor(executor, blocking)

    async def gatherer(loop):
        await asyncio.gather(asyncio.sleep(3600), fetch(loop.create_future()))

    async def leaf(event):
        await event.wait()

    async def level(depth, event):
        async with asyncio.TaskGroup() as group:
            if depth > 0:
                group.create_task(level(depth - 1, event), name="level-%d" % (depth - 1))
            else:
                group.create_task(leaf(event), name="leaf")

    def named(name):
        return {"name": name} if sys.version_info >= (3, 8) else {}

    async def start():
        loop = asyncio.get_running_loop()
        roles = {}

        def create(role, coroutine):
            roles[role] = loop.create_task(coroutine, **named(role))
            return roles[role]

        create("request-handler", handler(loop.create_future()))
        lock = asyncio.Lock()
        box = []
        create("holder", holder(lock, box))
        await asyncio.sleep(0.01)  # the holder takes the lock first
        box.append(create("waiter", waiter(lock)))
        create("sleeper", asyncio.sleep(3600))
        executor = concurrent.futures.ThreadPoolExecutor(max_workers=1,
                                                         thread_name_prefix="blocker")
        create("executor-user", in_executor(loop, executor))
        create("gatherer", gatherer(loop))
        if sys.version_info >= (3, 11):
            create("tg-root", level(2, asyncio.Event()))
        # `roles` also keeps the tasks alive: the loop holds tasks weakly, and one whose Future
        # nobody else holds would be collected.
        reporter = threading.Thread(target=write_truth, args=(path, loop, roles),
                                    name="reporter")
        reporter.start()
        await asyncio.sleep(3600)

    asyncio.run(start())
