#!/usr/bin/python3
"""Integration test: the bundled example core (examples/deadlock.core.zst, what the README's first
command prints) still reads as its ground truth says, and its deadlock is found: the JSON names
one cycle of the two workers, and the text's first report line says so. Read as scripts/demo
reads it (tests/programs/deadlock.py under --sysroot where the core names its program), each of
the program's frames shows its source line: the program in the repository is the one the core ran.

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
PROGRAM = os.path.join(REPO, "tests", "programs", "deadlock.py")
RAN_AS = "/tmp/hangpy-example/deadlock.py"  # scripts/make-example-core


def source_line_problems(coreanalyze, core, workdir):
    """The text read with the program under --sysroot shows each of its frames' source lines."""
    root = os.path.join(workdir, "example-root")
    os.makedirs(os.path.dirname(root + RAN_AS))
    with open(PROGRAM) as source, open(root + RAN_AS, "w") as copy:
        lines = source.read()
        copy.write(lines)
    lines = lines.splitlines()
    text = subprocess.run([coreanalyze, "--no-color", core, "--sysroot", root],
                          stdout=subprocess.PIPE, check=True).stdout.decode("utf-8", "replace")
    with open(TRUTH) as stream:
        truth = json.load(stream)
    problems = []
    text_lines = text.splitlines()
    for thread in truth["threads"].values():
        for path, number, _function in thread["frames"]:
            if path != RAN_AS:
                continue
            header = 'File "%s", line %d, in ' % (RAN_AS, number)
            at = next((i for i, line in enumerate(text_lines) if header in line), None)
            want = lines[number - 1].strip()
            if at is None or at + 1 >= len(text_lines) or text_lines[at + 1].strip() != want:
                problems.append("%s line %d: no source line %r under it" % (RAN_AS, number, want))
    return problems


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
        problems += source_line_problems(args.coreanalyze, core, workdir)
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
