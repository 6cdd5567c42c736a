"""A fork after an OpenMP pool started (issue 21): torch (built with GNU libgomp) runs a parallel
matrix product on 4 threads, which starts libgomp's thread pool; the process forks; the child's
first parallel region waits for ever for pool threads it does not have (the line marked
CHILD-WAITS). The parent waits for the child.

    python3 fork_openmp_pool.py TRUTH_JSON

The parent writes TRUTH_JSON ({"parent_pid", "child_pid", "threads": torch's thread count, "line"})
before it waits; the child writes TRUTH_JSON.child before its parallel region."""
import os
import sys

import groundtruth  # tests/programs/groundtruth.py: marker lines, atomic JSON

import torch


def main():
    truth_path = sys.argv[1]
    torch.set_num_threads(4)
    a = torch.randn(1000, 1000)
    (a @ a).sum()  # the pool starts here
    child = os.fork()
    if child == 0:
        with open(truth_path + ".child", "w") as out:
            out.write(str(os.getpid()))
        b = torch.randn(1000, 1000)
        for _ in range(100):
            (b @ b).sum()  # CHILD-WAITS
        os._exit(0)
    truth = {"parent_pid": os.getpid(), "child_pid": child, "threads": torch.get_num_threads(),
             "line": groundtruth.marker_line(__file__, "CHILD-WAITS")}
    groundtruth.write_json(truth_path, truth)
    os.waitpid(child, 0)


if __name__ == "__main__":
    main()
