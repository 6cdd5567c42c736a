# -*- coding: utf-8 -*-
"""N asyncio tasks that never finish, for scripts/bench-asyncio: half wait on one Event, half on
one Future (the shape of a service with many stuck requests). Prints "ready" once all are
suspended, then sleeps."""
import asyncio
import sys


async def handler(future):
    await future


async def worker(event):
    await event.wait()


async def main(count):
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    event = asyncio.Event()
    for i in range(count):
        loop.create_task(handler(future) if i % 2 else worker(event))
    await asyncio.sleep(0.5)
    print("ready", flush=True)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
