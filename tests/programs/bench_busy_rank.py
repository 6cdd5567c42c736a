"""A busy training rank's shape for scripts/bench-watch: PyTorch whose main thread runs parallel
element-wise operations back to back, so that its OpenMP pool of THREADS threads is running
(not asleep in a system call) most of the time, and a few Python threads asleep. Prints "ready"
once the pool has started.

    python3 bench_busy_rank.py THREADS [SLEEPERS]

SLEEPERS (default 4): Python threads asleep in time.sleep (a data loader's, a logger's, NCCL's
watchdogs...); scripts/bench's loaded-stop row gives 140, for a rank of about 150 threads."""
import sys
import threading
import time

import torch


def asleep():
    while True:
        time.sleep(1.0)


def main():
    torch.set_num_threads(int(sys.argv[1]))
    values = torch.randn(4_000_000)
    values.mul_(1.0)
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 4):
        threading.Thread(target=asleep, daemon=True).start()
    print("ready", flush=True)
    for step in range(10 ** 9):
        values.mul_(1.0000001)


if __name__ == "__main__":
    main()
