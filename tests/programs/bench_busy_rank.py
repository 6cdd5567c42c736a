"""A busy training rank's shape for scripts/bench-watch: PyTorch with an OpenMP pool of THREADS
threads that spin between parallel regions (OMP_WAIT_POLICY=ACTIVE, set by the benchmark), a
main thread that computes in a loop, and a few Python threads asleep. Prints "ready" once the
pool has started.

    python3 bench_busy_rank.py THREADS"""
import sys
import threading
import time

import torch


def asleep():
    while True:
        time.sleep(1.0)


def main():
    torch.set_num_threads(int(sys.argv[1]))
    matrix = torch.randn(128, 128)
    for _ in range(3):
        matrix @ matrix
    for _ in range(4):
        threading.Thread(target=asleep, daemon=True).start()
    print("ready", flush=True)
    for step in range(10 ** 9):
        matrix @ matrix
        time.sleep(0.002)


if __name__ == "__main__":
    main()
