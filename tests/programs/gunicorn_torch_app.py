"""A WSGI app for gunicorn --preload (issue 21's test of a pre-fork server that used torch before
fork): importing it runs a parallel matrix product on 4 threads in the arbiter, which starts GNU
libgomp's thread pool there; each worker forked from it then waits for ever in its first
parallel region (the line marked WORKER-HANGS), a pool whose threads it does not have.

A request first writes $HANGPY_READY_DIR/workerPID-PID.ready (the test tells the workers apart by
name). gunicorn kills a sync worker silent for --timeout seconds: the test gives it long enough."""
import os

import torch

torch.set_num_threads(4)
_warm = torch.randn(500, 500)
(_warm @ _warm).sum()  # the arbiter's pool starts here (--preload)


def app(environ, start_response):
    ready_dir = os.environ["HANGPY_READY_DIR"]
    path = os.path.join(ready_dir, "worker%d-%d.ready" % (os.getpid(), os.getpid()))
    with open(path + ".tmp", "w") as out:
        out.write("request")
    os.rename(path + ".tmp", path)
    matrix = torch.randn(500, 500)
    (matrix @ matrix).sum()  # WORKER-HANGS
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"done\n"]
