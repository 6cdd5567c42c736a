#!/usr/bin/python3
"""Integration test (issue 35): a thread list that loops is the process's damage, not a wrong
layout. A real gcore of tests/programs/deadlock.py (Debian's python3.11, three threads) has its
main thread state's `next` pointed back at the list's head (CPython 3.11's PyThreadState begins
with `prev` and `next`, Include/cpython/pystate.h: `next` is at offset 8), so that the list
loops. coreanalyze must give every thread's stack all the same, one warning that the list loops,
and exit 5 (partial), never "does not fit this process" (exit 6). The untouched core gives exit 0.

Exit status: 0 passed, 1 failed, 77 Debian's python3.11 or gdb is not installed.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
from results import Results  # noqa: E402
from test_zeroed_stacks import program_headers  # noqa: E402

NEXT_OFFSET = 8  # PyThreadState.next in 3.11


def write_pointer(path, address, value):
    """Writes the 8-byte `value` at `address` of the core's memory; False where no saved segment
    holds it."""
    with open(path, "r+b") as stream:
        data = stream.read()
        for p_type, _, offset, vaddr, _, filesz, _, _ in program_headers(data):
            if p_type == 1 and vaddr <= address and address + 8 <= vaddr + filesz:
                stream.seek(offset + address - vaddr)
                stream.write(struct.pack("<Q", value))
                return True
    return False


def main():
    args = interpreters.driver_arguments(__doc__)
    results = Results()
    for name, interpreter in interpreters.each_installed(args.interpreter or ["debian-3.11"], results):
        workdir = tempfile.mkdtemp(prefix="hangpy-loop-")
        try:
            with cores.ScenarioProcess(interpreter, "deadlock.py", workdir) as process:
                process.wait_for_ground_truth()
                core = process.take_core("gcore")
            before = subprocess.run([args.coreanalyze, core, "--json"], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, timeout=60)
            problems = []
            if before.returncode != 0:
                problems.append("the untouched core: exit %d" % before.returncode)
            threads = json.loads(before.stdout)["threads"]
            names = sorted(t["name"] for t in threads)
            # The walk lists the main thread first: the list's tail. Its next goes back to the head.
            main_state, head = int(threads[0]["thread_state"], 16), int(threads[-1]["thread_state"], 16)
            if not write_pointer(core, main_state + NEXT_OFFSET, head):
                problems.append("the core does not hold the main thread state at 0x%x" % main_state)
            after = subprocess.run([args.coreanalyze, core, "--json"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=60)
            err = after.stderr.decode("utf-8", "replace")
            if after.returncode != 5:
                problems.append("exit %d, want 5 (partial): %s" % (after.returncode, err.strip()[-300:]))
            if "does not fit" in err:
                problems.append("the layout is blamed: %s" % err.strip()[-300:])
            text = subprocess.run([args.coreanalyze, core], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=60)
            if "thread state list loops" not in text.stderr.decode("utf-8", "replace"):
                problems.append("no warning that the thread list loops: %r" % text.stderr[-300:])
            if after.stdout:
                document = json.loads(after.stdout)
                if "thread state list loops" not in json.dumps(document.get("warnings")):
                    problems.append("--json's warnings %r do not say the list loops" % document.get("warnings"))
                got = sorted(t["name"] for t in document["threads"])
                if got != names:
                    problems.append("threads %r, want %r" % (got, names))
            results.check("%s: a thread list that loops gives its threads, a warning, exit 5" % name, problems)
        except (cores.CoreError, subprocess.TimeoutExpired, ValueError, KeyError) as error:
            results.check("%s: a thread list that loops" % name, ["%s: %s" % (type(error).__name__, error)])
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
