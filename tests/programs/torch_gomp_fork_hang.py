# -*- coding: utf-8 -*-
"""A process forked after PyTorch's OpenMP pool started (torch.set_num_threads(4) and one
parallel op in the parent): the child's relu() on a big tensor enters libgomp, which waits on a
futex for pool threads that do not exist in the child. The ground truth is the child's; the
parent waits for the child forever."""
import os

import groundtruth

ELEMENTS = 4 * 1024 * 1024  # far above ATen's grain size: the op runs in parallel


def child(path, tensor):
    groundtruth.start(path, blockers=1)
    groundtruth.announce_blocking()
    tensor.relu()  # libgomp waits for the parent's pool threads: never returns


def main():
    path = groundtruth.output_path()
    try:
        import torch
    except ImportError as error:
        groundtruth.skip(path, "cannot import torch: %s" % error)
    torch.set_num_threads(4)
    tensor = torch.randn(ELEMENTS)
    tensor.relu()  # starts libgomp's pool of 4 threads in this process
    pid = os.fork()
    if pid == 0:
        child(path, tensor)
        os._exit(0)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
