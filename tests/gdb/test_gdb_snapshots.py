#!/usr/bin/python3
"""gdb test: hangpy in gdb on the corpus's snapshot cores (tests/corpus, `coreanalyze --snapshot`),
with no binaries: `gdb -c SNAPSHOT`, `load hangpy`, `thread apply all py-bt` must print the
frames of the snapshot's ground truth, and on asyncio snapshots `py-tasks` its tasks. gdb finds
no symbols without the binaries; hangpy reads
them from the note the snapshot carries. Runs on any machine: the corpus needs no interpreter.

  test_gdb_snapshots.py --hangpy-init build/gdbplugin/hangpy.gdb [--corpus tests/corpus]
                        [--interpreter pyenv-2.7 ...] [--scenario deadlock ...]

Exit status: 0 all passed, 1 a mismatch, 77 gdb, zstd, the module or the corpus is missing
(ctest's SKIP_RETURN_CODE).
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)
import compare_asyncio  # noqa: E402
import gdb_compare  # noqa: E402
import gdb_session  # noqa: E402
import run_scenarios  # noqa: E402
import test_corpus  # noqa: E402  (entries(): the corpus's snapshots)
from results import SKIP, Results  # noqa: E402

COMMANDS = [
    ("py-bt-all", "thread apply all py-bt"),
    ("status", "hangpy"),
]
# For a snapshot whose ground truth has asyncio tasks (asyncio_hang): py-tasks too, checked as
# integration.corpus checks coreanalyze's text (3.7 to 3.15, 3.14 and 3.15 from sid included).
TASKS_COMMAND = ("py-tasks", "py-tasks")


def commands_for(truth):
    return COMMANDS + ([TASKS_COMMAND] if truth.get("asyncio") else [])


def snapshots(corpus, interpreters, scenarios):
    """[(label, compressed core, truth path)] of the corpus, sorted, filtered by the options."""
    found = []
    for label, core, truth in test_corpus.entries(corpus):
        interpreter, scenario = label.split("/")
        if (interpreters and interpreter not in interpreters) or \
                (scenarios and scenario not in scenarios):
            continue
        found.append((label, core, truth))
    return found


def with_main_thread_lwp(truth):
    """Before 3.8 the programs cannot ask for their native thread ids (threading.get_native_id),
    and a single-threaded one does not: its main thread's LWP is the process id."""
    for thread in truth["threads"].values():
        if thread.get("native_id") is None and thread.get("name") == "MainThread":
            thread["native_id"] = truth["pid"]
    return truth


def check_output(result, truth, core):
    problems = []
    if result.returncode != 0:
        problems.append("gdb exited %d" % result.returncode)
    try:
        py_bt = gdb_session.split_threads(result.output("py-bt-all"))
        status = result.output("status")
    except KeyError as missing:
        return problems + ["gdb printed no output for %s; its output:\n%s"
                           % (missing, result.text[-3000:])]
    problems += gdb_compare.compare_thread_sections("py-bt", truth, py_bt,
                                                    gdb_compare.traceback_frames)
    if truth.get("asyncio"):
        try:
            tasks = "\n".join(result.output("py-tasks"))
        except KeyError:
            tasks = ""
        problems += ["py-tasks: %s" % problem
                     for problem in compare_asyncio.check_text(truth["asyncio"], tasks)]
    # The frames must come from the note, not from binaries gdb happened to find.
    if ("symbols from the snapshot note of %s" % core) not in status:
        problems.append("`hangpy` does not say the symbols came from the snapshot note: %s"
                        % status)
    for line in result.text.splitlines():
        if "Python Exception" in line or "internal error" in line:
            problems.append("gdb printed: %s" % line)
    return problems


def is_aarch64(core):
    """Whether the core's ELF header says EM_AARCH64 (183)."""
    with open(core, "rb") as core_file:
        header = core_file.read(20)
    return len(header) == 20 and struct.unpack_from("<H", header, 18)[0] == 183


def run_case(options, compressed, truth_path, workdir):
    """Problems, or None when the case cannot run here (an aarch64 core without gdb-multiarch)."""
    with open(truth_path) as truth_file:
        truth = with_main_thread_lwp(json.load(truth_file))
    core = run_scenarios.decompress(compressed, workdir)
    try:
        if is_aarch64(core):
            # This machine's gdb reads only x86-64 cores; gdb-multiarch reads an aarch64 one with
            # the same (x86-64) hangpy module loaded.
            multiarch = shutil.which("gdb-multiarch")
            if multiarch is None:
                return None
            options = gdb_session.GdbOptions(options.hangpy_init, gdb=multiarch)
        # The core alone: no executable, so gdb loads no binaries (not even ones of this machine
        # at the paths the core names).
        result = gdb_session.run_gdb(options, ["-c", core], commands_for(truth))
        return check_output(result, truth, core)
    except subprocess.TimeoutExpired as error:
        return [str(error)]
    finally:
        os.remove(core)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hangpy-init", required=True, help="build/gdbplugin/hangpy.gdb")
    parser.add_argument("--corpus", default=os.path.join(REPO, "tests", "corpus"))
    parser.add_argument("--interpreter", action="append", help="a directory of the corpus")
    parser.add_argument("--scenario", action="append")
    args = parser.parse_args()
    problem = gdb_session.environment_problem(args.hangpy_init)
    if problem:
        print("SKIP: %s" % problem)
        return SKIP
    if shutil.which("zstd") is None:
        print("SKIP: zstd is not installed (scripts/install-deps)")
        return SKIP
    cases = snapshots(args.corpus, args.interpreter, args.scenario)
    if not cases:
        print("SKIP: no snapshots in %s match" % args.corpus)
        return SKIP
    options = gdb_session.GdbOptions(hangpy_init=args.hangpy_init)
    results = Results()
    workdir = tempfile.mkdtemp(prefix="hangpy-gdb-snapshots-")
    try:
        for label, compressed, truth_path in cases:
            problems = run_case(options, compressed, truth_path, workdir)
            if problems is None:
                results.report("SKIP", label, ["an aarch64 core needs gdb-multiarch (scripts/install-deps)"])
            else:
                results.check(label, problems)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
