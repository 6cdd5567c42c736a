#!/usr/bin/python3
"""Integration test: asyncio tasks in `coreanalyze triage` (issues 11 and 12).

Three processes of tests/gdb/programs/asyncio_tasks.py (tasks stuck on a Future, a Lock deadlock,
asyncio.sleep, run_in_executor, gather, a TaskGroup tree) under one interpreter, each collected
with `coreanalyze --json --pid` and the three documents merged by `coreanalyze triage`. Checked
against the programs' own view of their tasks (all_tasks() and each task's cr_await chain):

- merged live (`triage --pid`) and from the documents: every pending task's coroutine stack
  (outermost first) is a path of the merged tree, and the node it ends at counts 3 times as many
  asyncio tasks as one process has with that stack (or a longer one through it), in processes
  0-2: identical stuck tasks fold across the fleet;
- the three processes are one group ("all 3 processes alike"), each with its task deadlock;
- the text tree shows the folded branches ("[3 asyncio tasks: processes 0-2]") and the group's
  tasks with what they await ("Awaiting: Future pending, 1 callback"); the --html page's script
  does the same (the DOM headless Chromium builds; skipped without chromium).

Exit status: 0 passed, 1 failed, 77 no interpreter to run the processes with.
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cores  # noqa: E402
import interpreters  # noqa: E402
from results import Results, SKIP  # noqa: E402

PROGRAM = os.path.join(os.path.dirname(HERE), "gdb", "programs", "asyncio_tasks.py")
# 3.11 on: code objects carry the qualnames the merge compares, and the program's TaskGroup tree
# runs. Any one interpreter will do.
CANDIDATES = ["pyenv-3.12", "debian-3.11", "pyenv-3.13", "pyenv-3.11"]
PROCESSES = 3
RUN_TIMEOUT = 120


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT)


def truth_stacks(truth):
    """Counter of the pending tasks' coroutine stacks, outermost first, as the merge names frames
    ((qualname, file, line))."""
    stacks = collections.Counter()
    for task in truth["tasks"]:
        if not task["done"] and task["coroutines"]:
            stacks[tuple((qualname, path, line)
                         for path, line, _, qualname in reversed(task["coroutines"]))] += 1
    return stacks


def find_box(tree, stack):
    """The box of the triage's --json tree where `stack` ends, or None: boxes hold chains of
    frames, so the stack's frames are matched box by box from the root."""
    box, at = tree, 0
    while at < len(stack):
        for child in box["children"]:
            frames = [(f["function"], f["file"], f["line"]) for f in child["frames"]]
            if tuple(frames[:len(stack) - at]) == stack[at:at + len(frames)]:
                box, at = child, at + len(frames)
                break
        else:
            return None
    return box


def check_tree(document, stacks, count):
    problems = []
    for stack, _ in sorted(stacks.items()):
        # The node counts every task through it: this stack's and the longer ones it begins.
        through = sum(n for other, n in stacks.items() if other[:len(stack)] == stack)
        box = find_box(document["tree"], stack)
        where = " <- ".join("%s:%d" % (frame[0], frame[2]) for frame in reversed(stack))
        if box is None:
            problems.append("no path of the merged tree for the task stack %s" % where)
            continue
        if box["asyncio_tasks"] != count * through or box["processes"] != "0-%d" % (count - 1):
            problems.append("%s: %d asyncio tasks in processes %s (%s), want %d in 0-%d"
                            % (where, box["asyncio_tasks"], box["processes"], box["label"],
                               count * through, count - 1))
    return problems


def check_merge(results, label, merged, stacks):
    problems = []
    if merged.returncode != 0:
        problems.append("exit %d: %s" % (merged.returncode, merged.stderr.decode()[-300:]))
    else:
        document = json.loads(merged.stdout)
        problems += check_tree(document, stacks, PROCESSES)
        if document["verdict_kind"] != "all_alike" or len(document["groups"]) != 1:
            problems.append("verdict %s (%s), %d groups: want all alike, one group"
                            % (document["verdict_kind"], document["verdict"],
                               len(document["groups"])))
        pending = sum(stacks.values())
        for process in document["processes"]:
            if process["asyncio_tasks"] != pending or not any(
                    "holder" in d and "waiter" in d for d in process["deadlocks"]):
                problems.append("process %d: %d asyncio tasks (want %d), deadlocks %s"
                                % (process["index"], process["asyncio_tasks"], pending,
                                   process["deadlocks"]))
    results.check("%s: identical tasks of %d processes fold (%d distinct task stacks)"
                  % (label, PROCESSES, len(stacks)), problems)


def check_html(results, coreanalyze, documents, workdir):
    """The --html page's own script lists the group's tasks as tasks: the DOM headless Chromium
    builds from it."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        results.report("SKIP", "triage --html in headless Chromium",
                       ["chromium is not installed (apt-get install chromium)"])
        return
    page = os.path.join(workdir, "triage.html")
    written = run([coreanalyze, "triage", "--html", page] + documents)
    profile = tempfile.mkdtemp(prefix="hangpy-chromium-")
    try:
        dom = run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                   "--disable-background-networking", "--disable-component-update",
                   "--disable-sync", "--no-first-run", "--user-data-dir=" + profile,
                   "--dump-dom", "file://" + page])
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    text = dom.stdout.decode("utf-8", "replace")
    problems = [] if written.returncode == 0 else ["triage --html: exit %d" % written.returncode]
    for want in ("asyncio task \"request-handler\"\n    Awaiting: Future pending, 1 callback",
                 "\u00d73 asyncio tasks alike: ",
                 "3 asyncio tasks: processes 0-2"):
        if want not in text:
            problems.append("the page has no %r" % want)
    results.check("triage --html in headless Chromium: tasks shown as tasks", problems)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    coreanalyze = os.path.abspath(args.coreanalyze)
    interpreter = None
    for name in CANDIDATES:
        interpreter = interpreters.resolve(name)
        if interpreter is not None:
            break
    if interpreter is None:
        print("SKIP: none of %s is installed" % ", ".join(CANDIDATES))
        return SKIP
    results = Results()
    workdir = tempfile.mkdtemp(prefix="hangpy-triage-asyncio-")
    processes = []
    try:
        documents, truths = [], []
        for index in range(PROCESSES):
            process_dir = os.path.join(workdir, "p%d" % index)
            os.mkdir(process_dir)
            processes.append(cores.ScenarioProcess(interpreter, PROGRAM, process_dir))
        for index, process in enumerate(processes):
            truth = process.wait_for_ground_truth()
            if "skip" in truth:
                print("SKIP: %s" % truth["skip"])
                return SKIP
            truths.append(truth)
            collected = run([coreanalyze, "--json", "--pid", str(process.pid)])
            path = os.path.join(workdir, "p%d.json" % index)
            with open(path, "wb") as out:
                out.write(collected.stdout)
            documents.append(path)
            results.check("coreanalyze --json --pid %d (%s)" % (process.pid, interpreter.name),
                          [] if collected.returncode == 0 and b'"asyncio"' in collected.stdout else
                          ["exit %d, no \"asyncio\" in the document: %s"
                           % (collected.returncode, collected.stderr.decode()[-300:])])
        stacks = truth_stacks(truths[0])
        if any(truth_stacks(truth) != stacks for truth in truths[1:]):
            results.report("FAIL", "the processes' own task stacks differ: the program is not "
                           "deterministic")
        # The live processes, each analysed by a child coreanalyze --json, then their documents.
        pids = ",".join(str(process.pid) for process in processes)
        check_merge(results, "triage --json --pid %s" % pids,
                    run([coreanalyze, "triage", "--json", "--pid", pids]), stacks)
        for process in processes:
            process.kill()
        check_merge(results, "triage --json of the %d --json --pid documents" % PROCESSES,
                    run([coreanalyze, "triage", "--json"] + documents), stacks)

        text = run([coreanalyze, "triage"] + documents)
        output = text.stdout.decode("utf-8", "replace")
        problems = []
        for want in ("all %d processes alike" % PROCESSES,
                     "asyncio tasks, 1 group):",
                     "[%d asyncio tasks: processes 0-%d]" % (PROCESSES, PROCESSES - 1),
                     "asyncio task \"request-handler\"\n    Awaiting: Future pending, 1 callback"):
            if want not in output:
                problems.append("the text has no %r" % want)
        if problems:
            problems.append(output)
        else:
            print(output)
        results.check("triage (text): the folded tasks and what they await", problems)
        check_html(results, coreanalyze, documents, workdir)
    except (cores.CoreError, subprocess.TimeoutExpired) as error:
        results.report("FAIL", "running the processes", [str(error)])
    finally:
        for process in processes:
            process.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
