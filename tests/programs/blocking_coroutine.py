# -*- coding: utf-8 -*-
"""Coroutines for asyncio_task.py, apart because `async def` does not compile on Python 2."""
import asyncio

import groundtruth


async def read_reply(lock):
    groundtruth.expect_wait("lock", lock, owner="self")
    groundtruth.announce_blocking()
    lock.acquire()  # held, and not awaited: blocks the whole event loop forever


async def fetch(lock):
    await read_reply(lock)


async def run_fetch_task(lock):
    await asyncio.ensure_future(fetch(lock))
