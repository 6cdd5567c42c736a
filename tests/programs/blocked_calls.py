"""Threads blocked in system calls whose outcome a stop could change, for
tests/integration/test_live_harmless.py.

    python3 blocked_calls.py READY_PATH RESULT_PATH DELAY

Each thread makes one call that blocks for about DELAY seconds, then records what it returned
and how long it took: a 1,000,000-byte write to a pipe (os.write, and through a buffered file)
and a send on a socket, all drained by the main thread only after DELAY; a read of a pipe and a
recv on a socket, fed after DELAY; time.sleep, select, poll, epoll and Lock.acquire with DELAY as
their timeout. One more thread runs Python all the time (a read must stop it). READY_PATH gets
each thread's innermost function (sys._current_frames()) once all of them block; RESULT_PATH
gets every outcome when the program ends.
"""
import json
import os
import select
import socket
import sys
import threading
import time

SIZE = 1000000
results = {}


def record(name, call):
    started = time.monotonic()
    try:
        outcome = {"value": call()}
    except Exception as error:  # the outcome to compare, whatever it is
        outcome = {"error": repr(error)}
    outcome["seconds"] = time.monotonic() - started
    results[name] = outcome


def drain(fd):
    total = 0
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return total
        total += len(chunk)


def main():
    ready_path, result_path, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
    write_r, write_w = os.pipe()
    buffered_r, buffered_w = os.pipe()
    read_r, read_w = os.pipe()
    idle_r, idle_w = os.pipe()
    send_a, send_b = socket.socketpair()
    recv_a, recv_b = socket.socketpair()
    lock = threading.Lock()
    lock.acquire()
    stop_spinning = threading.Event()

    def write_buffered():
        with os.fdopen(buffered_w, "wb") as stream:
            stream.write(b"b" * SIZE)
        return "closed"

    def spin():
        count = 0
        while not stop_spinning.is_set():
            count += 1
        return "spun"

    poller = select.poll()
    poller.register(idle_r, select.POLLIN)
    epoll = select.epoll()
    epoll.register(idle_r, select.EPOLLIN)
    calls = {
        "pipe-write": lambda: os.write(write_w, b"w" * SIZE),
        "buffered-write": write_buffered,
        "socket-send": lambda: send_a.send(b"s" * SIZE),
        "pipe-read": lambda: len(os.read(read_r, 100)),
        "socket-recv": lambda: len(recv_a.recv(100)),
        "sleep": lambda: time.sleep(delay),
        "select": lambda: [len(ready) for ready in select.select([idle_r], [], [], delay)],
        "poll": lambda: poller.poll(delay * 1000),
        "epoll": lambda: epoll.poll(delay),
        "lock": lambda: lock.acquire(True, delay),
        "spin": spin,
    }
    started = time.monotonic()
    threads = []
    for name, call in calls.items():
        thread = threading.Thread(target=record, args=(name, call), name=name)
        thread.start()
        threads.append(thread)
    time.sleep(min(0.5, delay / 4))  # each thread reaches its call
    frames = sys._current_frames()
    innermost = dict((thread.name, frames[thread.ident].f_code.co_name)
                     for thread in threads if thread.ident in frames)
    # Thread.native_id (3.8 on): the LWP each thread must be shown with, found for a thread read
    # in its system call from its thread pointer before 3.11.
    native_ids = dict((thread.name, getattr(thread, "native_id", None)) for thread in threads)
    with open(ready_path + ".tmp", "w") as stream:
        json.dump({"pid": os.getpid(), "innermost": innermost, "native_ids": native_ids}, stream)
    os.rename(ready_path + ".tmp", ready_path)

    time.sleep(max(0.0, delay - (time.monotonic() - started)))
    os.write(read_w, b"r" * 10)
    recv_b.sendall(b"q" * 10)
    stop_spinning.set()
    received = {}
    drainers = [threading.Thread(target=lambda: received.update(pipe=drain(write_r))),
                threading.Thread(target=lambda: received.update(buffered=drain(buffered_r)))]
    for drainer in drainers:
        drainer.start()

    def drain_socket():
        send_b.settimeout(delay + 5)
        total = 0
        while total < SIZE:
            try:
                chunk = send_b.recv(1 << 16)
            except socket.timeout:  # the send was cut short: nothing more comes
                break
            if not chunk:
                break
            total += len(chunk)
        received["socket"] = total
    drain_socket()
    for thread in threads:
        thread.join()
    os.close(write_w)
    for drainer in drainers:
        drainer.join()
    results["received"] = received
    with open(result_path, "w") as stream:
        json.dump(results, stream, sort_keys=True)


if __name__ == "__main__":
    main()
