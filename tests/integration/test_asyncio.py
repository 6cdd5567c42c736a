#!/usr/bin/python3
"""Integration test: asyncio tasks (issue 12) on every interpreter present with Python 3.7+.

tests/programs/asyncio_hang.py runs a hung asyncio service (a request handler on a Future nobody
sets, a gather with an await cycle through an asyncio.Lock, a TaskGroup tree on 3.11+,
run_in_executor blocked in a thread, asyncio.sleep(3600)) and writes the interpreter's own view
of its tasks. Under each interpreter, one such process is read

  - live: coreanalyze --pid PID (--json and text);
  - through a snapshot: coreanalyze --pid PID --snapshot FILE, FILE read back;
  - from a core of it: gdb's gcore; in a chroot, where gcore loses the executor thread's stack,
    a kernel core too (its threads are checked on that one only);

and each reading is checked against the ground truth (compare_asyncio.py): the tasks (addresses,
names from 3.8, states), each task's coroutine stack innermost first (function, file, line; the
outermost is Task.get_stack()'s), the coroutines' qualnames, what each task awaits (future, task,
lock, sleep, executor, taskgroup, gather, event), the awaited-by edges (3.14+: those of
asyncio.capture_call_graph), exactly the one await cycle, the text section's header and its
deadlock line; the threads' stacks as the other integration tests check them. On 3.14+
`python -m asyncio pstree PID` reads the same live process, and its tasks and awaited-by edges
must be coreanalyze's.

Exit status: 0 passed, 1 failed, 77 no interpreter with Python 3.7+ is installed.
"""
import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import compare_asyncio  # noqa: E402
import cores  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
from results import Results  # noqa: E402

PROGRAM = "asyncio_hang.py"
RUN_TIMEOUT = 60
MINIMUM = (3, 7)  # asyncio.run, all_tasks, create_task
PSTREE_MINIMUM = (3, 14)
# gdb 13's gcore of a process in a chroot saves parts of the other threads' stacks as zeros (see
# run_scenarios.GCORE_LOSES_THREAD_STACKS_IN_CHROOTS); there the core is the kernel's.
TREE_BRANCH = re.compile(r"^((?:│   |    )*)(?:└── |├── )(.*)$")


def version_in_name(name):
    """(major, minor) from a table name ("pyenv-3.12", "sid-3.14", "local-3.13t"), or None."""
    match = re.search(r"(\d+)\.(\d+)", name)
    return (int(match.group(1)), int(match.group(2))) if match else None


def names_to_test():
    found = []
    for name in interpreters.names("integration"):
        version = version_in_name(name)
        if version is not None and version >= MINIMUM:
            found.append(name)
    return found


def version_of(truth):
    return tuple(int(part) for part in truth["version"].split(".")[:2])


def run(argv, timeout=RUN_TIMEOUT):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return (result.returncode, result.stdout.decode("utf-8", "replace"),
            result.stderr.decode("utf-8", "replace"))


def without_asyncio(truth):
    rest = copy.copy(truth)
    rest.pop("asyncio", None)
    return rest


EXIT_PARTIAL = 5  # base/exit_codes.h: output printed, some stacks not read whole


def reading_cases(truth, code, out, err, text, partial_stacks=False):
    """[(check, problems)] for one reading: coreanalyze's --json output `out` (exit `code`,
    stderr `err`) and its text output `text`; `partial_stacks`: a thread's stack is known to be
    lost (exit 5 is then right; the threads are not checked)."""
    if partial_stacks and code == EXIT_PARTIAL:
        code = 0
    if code != 0:
        return [("run", ["coreanalyze --json exited %d: %s" % (code, err.strip()[-500:])])]
    try:
        document = json.loads(out)
    except ValueError as error:
        return [("run", ["coreanalyze --json printed no JSON (%s): %s" % (error, err.strip())])]
    cases = [("threads", compare.compare_json(without_asyncio(truth), document))]
    cases += compare_asyncio.checks(truth["asyncio"], document)
    cases.append(("text", compare_asyncio.check_text(truth["asyncio"], text)))
    return cases


def read_twice(coreanalyze, target_args):
    """(code, --json output, stderr, text output) of coreanalyze on `target_args`."""
    code, out, err = run([coreanalyze, "--no-color", "--json"] + target_args)
    _, text, _ = run([coreanalyze, "--no-color"] + target_args)
    return code, out, err, text


def pstree_tree(output):
    """(task names, awaited-by edges as (awaiter, awaited) name pairs) of `asyncio pstree`'s
    tree: a task's awaiter is the nearest task above it in the tree."""
    names, edges = set(), set()
    path = []  # (depth, is_task, label) of the lines above, outermost first
    for line in output.splitlines():
        match = TREE_BRANCH.match(line)
        if not match:
            continue
        depth = len(match.group(1)) // 4
        label = match.group(2)
        is_task = label.startswith("(T) ")
        del path[depth:]
        if is_task:
            name = label[len("(T) "):]
            names.add(name)
            awaiters = [entry for entry in path if entry[1]]
            if awaiters:
                edges.add((awaiters[-1][2], name))
        path.append((depth, is_task, label[len("(T) "):] if is_task else label))
    return names, edges


def our_tree(document):
    """(task names, awaited-by edges by name) of coreanalyze's JSON."""
    tasks = (document.get("asyncio") or {}).get("tasks") or []
    by_address = dict((compare_asyncio.address(t.get("address")), t.get("name")) for t in tasks)
    edges = set()
    for task in tasks:
        for awaiter in task.get("awaited_by") or []:
            edges.add((by_address.get(compare_asyncio.address(awaiter)), task.get("name")))
    return set(by_address.values()), edges


def truth_tree(truth):
    tasks = truth["asyncio"]["tasks"]
    edges = set()
    for task in tasks.values():
        for awaiter in task["awaited_by"]:
            edges.add((tasks[awaiter]["name"], task["name"]))
    return set(task["name"] for task in tasks.values()), edges


def sleep_time_left_case(document):
    """Live, the hour-long sleep says how long it has left (loop.time() is time.monotonic(),
    which coreanalyze reads too): under an hour, and not less than the test could have taken."""
    problems = []
    sleeps = [task for task in (document.get("asyncio") or {}).get("tasks") or []
              if (task.get("awaits") or {}).get("detail", "").startswith("asyncio.sleep(3600)")]
    if not sleeps:
        return ["no task awaits asyncio.sleep(3600)"]
    for task in sleeps:
        match = re.search(r", due in (\d+) s$", task["awaits"]["detail"])
        if not match or not 3000 <= int(match.group(1)) <= 3600:
            problems.append("%s: %r, want ', due in N s' with N from 3000 to 3600"
                            % (task.get("name"), task["awaits"]["detail"]))
    return problems


def pstree_case(interpreter, process, live_document):
    """`python -m asyncio pstree PID` (3.14+, run where the process runs) against coreanalyze's
    --pid reading and the ground truth."""
    argv = [interpreter.executable, "-m", "asyncio", "pstree", str(process.pid)]
    if interpreter.root:
        # In the process's own mount namespace and root: there the paths of its mappings are
        # the ones pstree opens (from another namespace they read as the host's).
        argv = ["nsenter", "--target", str(process.pid), "--mount", "--root", "--wd=/"] + argv
    code, out, err = run(argv)
    if code != 0 and "AsyncioDebug section not available" in (err or out):
        # 3.14's own tool looks for _asyncio's debug section in a shared module: where _asyncio is
        # linked into the executable (python-build-standalone, conda-shaped builds) it gives up.
        # coreanalyze's reading is checked against the ground truth by the other cases.
        print("note: %s: python -m asyncio pstree cannot read this build (%s); nothing to "
              "compare with" % (interpreter.name, (err or out).strip().splitlines()[-1]))
        return []
    if code != 0:
        return ["asyncio pstree exited %d: %s" % (code, (err or out).strip()[-500:])]
    names, edges = pstree_tree(out)
    problems = []
    want_names, want_edges = truth_tree(process.truth)
    if names != want_names or edges != want_edges:
        problems.append("asyncio pstree disagrees with the ground truth: tasks %s, edges %s"
                        % (sorted(names ^ want_names), sorted(edges ^ want_edges)))
    if live_document is None:
        return problems + ["no --pid reading to compare"]
    ours_names, ours_edges = our_tree(live_document)
    if ours_names != names:
        problems.append("tasks only in asyncio pstree: %s; only in coreanalyze's: %s"
                        % (sorted(names - ours_names), sorted(ours_names - names)))
    if ours_edges != edges:
        problems.append("awaited-by edges only in asyncio pstree: %s; only in coreanalyze's: %s"
                        % (sorted(edges - ours_edges), sorted(ours_edges - edges)))
    return problems


def truth_cases(truth):
    """The ground truth's own consistency: on 3.14+ the awaited-by edges this program knows
    it made are capture_call_graph's, and its coroutine chains are capture_call_graph's call
    stacks."""
    problems = []
    for key, task in sorted(truth["asyncio"]["tasks"].items()):
        graph = task.get("call_graph")
        if graph is None:
            continue
        if sorted(task["known_awaited_by"]) != sorted(graph["awaited_by"]):
            problems.append("%s: the program's awaiters %s, capture_call_graph's %s"
                            % (task["role"], task["known_awaited_by"], graph["awaited_by"]))
        chain = [[c["function"], c["file"], c["line"]] for c in task["coroutine_chain"]]
        if chain != graph["call_stack"]:
            problems.append("%s: cr_await chain %s, capture_call_graph's %s"
                            % (task["role"], chain, graph["call_stack"]))
    return problems


def core_kinds(interpreter):
    """gcore always; in a chroot, where gcore loses the executor thread's stack, a kernel core
    too (last: it ends the process), if the kernel writes one where we can find it."""
    if interpreter.root and not cores.kernel_core_unavailable_reason():
        return ["gcore", "kernel"]
    return ["gcore"]


def interpreter_cases(coreanalyze, name, interpreter, workdir):
    """Yields (label, problems) for one interpreter; the labels name the reading and the check."""
    timings = []
    kinds = core_kinds(interpreter)
    with cores.ScenarioProcess(interpreter, PROGRAM, workdir,
                               raise_core_limit=("kernel" in kinds)) as process:
        started = time.time()
        truth = process.wait_for_ground_truth()
        timings.append("program %.1f s" % (time.time() - started))
        if "skip" in truth:
            yield None, truth["skip"]
            return
        if version_of(truth) >= PSTREE_MINIMUM:
            yield "ground truth (capture_call_graph)", truth_cases(truth)

        started = time.time()
        code, out, err, text = read_twice(coreanalyze, ["--pid", str(process.pid)])
        timings.append("--pid %.1f s" % (time.time() - started))
        for check, problems in reading_cases(truth, code, out, err, text):
            yield "--pid: " + check, problems
        live_document = json.loads(out) if code == 0 else None
        if live_document is not None:
            yield "--pid: a sleep's time left", sleep_time_left_case(live_document)

        snapshot = os.path.join(workdir, "live.core")
        started = time.time()
        code, _, err = run([coreanalyze, "--no-color", "--json", "--pid", str(process.pid),
                            "--snapshot", snapshot])
        if code != 0 or not os.path.exists(snapshot):
            yield "--pid --snapshot", ["exited %d, wrote %s: %s"
                                       % (code, os.path.exists(snapshot), err.strip())]
        else:
            size = os.path.getsize(snapshot)
            code, out, err, text = read_twice(coreanalyze, [snapshot])
            timings.append("snapshot %.1f s" % (time.time() - started))
            for check, problems in reading_cases(truth, code, out, err, text):
                yield "snapshot (%d KB): %s" % (size // 1024, check), problems
            os.unlink(snapshot)

        if version_of(truth) >= PSTREE_MINIMUM:
            started = time.time()
            yield "python -m asyncio pstree", pstree_case(interpreter, process, live_document)
            timings.append("pstree %.1f s" % (time.time() - started))

        for kind in kinds:
            started = time.time()
            core = process.take_core(kind)
            sysroot = ["--sysroot", interpreter.root] if interpreter.root else []
            code, out, err, text = read_twice(coreanalyze, [core] + sysroot)
            timings.append("%s core %.1f s" % (kind, time.time() - started))
            os.unlink(core)
            # run_scenarios.GCORE_LOSES_THREAD_STACKS_IN_CHROOTS; the kernel core has them.
            lost_stacks = kind == "gcore" and interpreter.root is not None
            for check, problems in reading_cases(truth, code, out, err, text, lost_stacks):
                if check != "threads" or not lost_stacks:
                    yield "%s core: %s" % (kind, check), problems
    yield "timings", ["; ".join(timings)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--interpreter", action="append",
                        help="only these (names of interpreters.py)")
    args = parser.parse_args()
    results = Results()
    started = time.time()
    for name, interpreter in interpreters.each_installed(args.interpreter or names_to_test(),
                                                         results):
        workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-asyncio-")
        try:
            for label, problems in interpreter_cases(args.coreanalyze, name, interpreter, workdir):
                if label is None:
                    results.report("SKIP", name, [problems])
                elif label == "timings":
                    print("     %s: %s" % (name, problems[0]))
                else:
                    results.check("%s %s" % (name, label), problems)
        except (cores.CoreError, subprocess.TimeoutExpired) as error:
            results.check("%s %s" % (name, PROGRAM), [str(error)])
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    print("%.0f s in all" % (time.time() - started))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
