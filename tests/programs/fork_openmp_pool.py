"""A fork after an OpenMP pool started (issue 21): torch (built with GNU libgomp) runs a parallel
matrix product on 4 threads, which starts libgomp's thread pool; the process forks; the child's
first parallel region waits for ever for pool threads it does not have (the line marked
CHILD-WAITS). The parent waits for the child.

    python3 fork_openmp_pool.py TRUTH_JSON

The parent writes TRUTH_JSON ({"parent_pid", "child_pid", "threads": torch's thread count, "line"})
before it waits; the child writes TRUTH_JSON.child before its parallel region."""
import json
import os
import sys

import torch


def marker_line(marker):
    with open(__file__) as source:
        for number, line in enumerate(source, 1):
            if "# " + marker in line and "marker_line" not in line:
                return number
    return None


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
             "line": marker_line("CHILD-WAITS")}
    with open(truth_path + ".tmp", "w") as out:
        json.dump(truth, out)
    os.rename(truth_path + ".tmp", truth_path)
    os.waitpid(child, 0)


if __name__ == "__main__":
    main()
