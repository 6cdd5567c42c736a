#!/usr/bin/python3
"""Integration test: the bundled example core (examples/deadlock.core.zst, what the README's first
command prints) still reads as its ground truth says, and its deadlock is found: the JSON names
one cycle of the two workers, and the text's first report line says so.

Exit status: 0 passed, 1 failed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CORE = os.path.join(REPO, "examples", "deadlock.core.zst")
TRUTH = os.path.join(REPO, "examples", "deadlock.truth.json")
WORKERS = {"worker-ab", "worker-ba"}  # tests/programs/deadlock.py


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    problems = []
    stacks = subprocess.run([sys.executable, os.path.join(HERE, "run_scenarios.py"),
                             "--coreanalyze", args.coreanalyze, "--core", CORE, "--truth", TRUTH])
    if stacks.returncode != 0:
        problems.append("the example's stacks differ from its ground truth")
    with tempfile.TemporaryDirectory() as workdir:
        core = os.path.join(workdir, "deadlock.core")
        subprocess.run(["zstd", "-q", "-d", "-f", CORE, "-o", core], check=True)
        document = json.loads(subprocess.run([args.coreanalyze, "--json", core],
                                             stdout=subprocess.PIPE, check=True).stdout)
        text = subprocess.run([args.coreanalyze, "--no-color", core], stdout=subprocess.PIPE,
                              check=True).stdout.decode("utf-8", "replace")
    cycles = document.get("deadlocks") or []
    names = [{thread.get("name") for thread in cycle.get("threads", [])} for cycle in cycles]
    if names != [WORKERS]:
        problems.append("deadlocks in the JSON: %r, expected one cycle of %r" % (names, WORKERS))
    # After the header: "Process ...", then its "Role: ..." and "Parent PID ..." lines.
    first = next((line for line in text.splitlines()[1:]
                  if line.strip() and not line.startswith(("Role: ", "Parent PID"))), "")
    if not (first.startswith("deadlock: ") and all('"%s"' % name in first for name in WORKERS)):
        problems.append("the text does not open with the deadlock: %r" % first)
    for problem in problems:
        print("FAIL", problem)
    print("PASS example" if not problems else "FAIL example")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
