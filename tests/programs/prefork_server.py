"""A pre-fork server (as gunicorn's arbiter and workers, with os.fork only), for the job-triage
tests: the arbiter listens on a loopback port, forks WORKERS workers that each wait in accept(),
and waits for them; worker STUCK never gets to accept(): it waits at startup on a lock that the
arbiter held when it forked (a logging or cache lock can be), at the line marked WORKER-STUCK.

    python3 prefork_server.py READY_DIR

Each worker writes READY_DIR/workerW-PID.ready before it blocks, the arbiter
READY_DIR/arbiter-PID.ready once every worker is forked."""
import os
import socket
import sys
import threading

WORKERS = 4
STUCK = 2
cache_lock = threading.Lock()


def ready(ready_dir, name):
    path = os.path.join(ready_dir, "%s-%d.ready" % (name, os.getpid()))
    with open(path + ".tmp", "w") as out:
        out.write(name)
    os.rename(path + ".tmp", path)


def serve(listener, ready_dir, worker):
    if worker == STUCK:
        load_cache(ready_dir, worker)
    ready(ready_dir, "worker%d" % worker)
    while True:
        connection, _ = listener.accept()
        connection.sendall(b"HTTP/1.0 200 OK\r\n\r\nhello\n")
        connection.close()


def load_cache(ready_dir, worker):
    ready(ready_dir, "worker%d" % worker)
    with cache_lock:  # WORKER-STUCK: held by the arbiter at fork time, never released here
        pass


def main():
    ready_dir = sys.argv[1]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    workers = []
    cache_lock.acquire()  # the arbiter fills the cache while it forks the workers
    for worker in range(WORKERS):
        pid = os.fork()
        if pid == 0:
            serve(listener, ready_dir, worker)
            os._exit(0)
        workers.append(pid)
    cache_lock.release()
    ready(ready_dir, "arbiter")
    for pid in workers:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
