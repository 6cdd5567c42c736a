#!/usr/bin/python3
"""Integration test: coreanalyze --native unwinds through CPython's perf trampolines (-X perf, or
PYTHONPERFSUPPORT=1, 3.12 on): a few instructions copied into anonymous memory for each code
object, with no unwind table, between every eval-loop call and its caller. Without a step over
them the native stack ended at the innermost eval loop. tests/programs/deadlock.py runs with the
trampolines on; for each of its threads, live (--pid) and from a core, the JSON's native
stack must hold:
  - the thread's Python frames, outermost first, as the program's own ground truth lists them;
  - frames named "[Python perf trampoline]" (outside each eval-loop call), and native frames
    found by stepping over one (how: "trampoline");
  - no early end (`end_reason`), and native frames outside the outermost Python frame (the walk
    went on to the interpreter's entry: PyEval_EvalCode, or the thread's start).
Interpreters without perf trampolines (before 3.12, or built without them) are skipped.

And the JIT (3.13 on, --enable-experimental-jit): tests/programs/jit_blocked.py blocks in a C call
made from a compiled trace. The frame there must be named "[generated code: JIT]", followed by the
thread's Python frames as its ground truth has them, and the stack must say it ends there.

Exit status: 0 passed, 1 failed, 77 no interpreter with perf trampolines is installed.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
from results import Results  # noqa: E402

PROGRAM = "deadlock.py"
TRAMPOLINE = "[Python perf trampoline]"
PROBE = ("import sys; print(getattr(sys, 'is_stack_trampoline_active', lambda: False)())")


def trampolines_available(interpreter, workdir):
    env = cores.scenario_environment()
    env["PYTHONPERFSUPPORT"] = "1"
    result = subprocess.run(interpreter.command(interpreter.guest_path(workdir), ["-c", PROBE]),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=60)
    return result.stdout.decode("utf-8", "replace").strip().endswith("True")


def check_document(document, truth, label):
    problems = []
    by_lwp = {thread.get("native_thread_id"): thread for thread in document.get("threads", [])}
    for ident, truth_thread in truth["threads"].items():
        lwp = truth_thread.get("native_id")
        thread = by_lwp.get(lwp)
        if thread is None:
            problems.append("%s: no thread with LWP %s" % (label, lwp))
            continue
        stack = thread.get("native_stack") or {}
        frames = stack.get("frames") or []
        want = [(frame[0], frame[1], frame[2]) for frame in truth_thread["frames"]]
        got = [(f.get("file"), f.get("line"), f.get("function")) for f in frames
               if f.get("kind") == "python"]
        if got != want:
            problems.append("%s LWP %s: Python frames %s, want %s" % (label, lwp, got, want))
        natives = [f for f in frames if f.get("kind") == "native"]
        # (The frame after a trampoline may be an eval loop's, which its Python frames replace.)
        trampolines = [f for f in natives if f.get("symbol") == TRAMPOLINE]
        stepped = [f for f in natives if f.get("how") == "trampoline"]
        if not trampolines or not stepped:
            problems.append("%s LWP %s: %d trampoline frames, %d found by stepping over one"
                            % (label, lwp, len(trampolines), len(stepped)))
        if stack.get("end_reason"):
            problems.append("%s LWP %s: the native stack ends early: %s"
                            % (label, lwp, stack["end_reason"]))
        python_at = [i for i, f in enumerate(frames) if f.get("kind") == "python"]
        if python_at and not any(f.get("kind") == "native" and f.get("symbol") != TRAMPOLINE
                                 for f in frames[:python_at[0]]):
            problems.append("%s LWP %s: no native frame outside the outermost Python frame: the "
                            "walk stopped at a trampoline" % (label, lwp))
    return problems


def run_interpreter(coreanalyze, interpreter):
    workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-perf-")
    saved = os.environ.get("PYTHONPERFSUPPORT")
    try:
        if not trampolines_available(interpreter, workdir):
            return "SKIP", ["no perf trampolines (3.12 on, where the build has them)"]
        os.environ["PYTHONPERFSUPPORT"] = "1"  # ScenarioProcess passes the environment on
        problems = []
        # The core kind this interpreter's other tests take (a kernel core in a chroot, where
        # gdb's gcore misreads the threads).
        kind = cores.single_core_kind(interpreter)
        with cores.ScenarioProcess(interpreter, PROGRAM, workdir,
                                   raise_core_limit=(kind == "kernel")) as process:
            truth = process.wait_for_ground_truth()
            live = subprocess.run([coreanalyze, "--pid", str(process.pid), "--native", "--json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=run_scenarios.COREANALYZE_TIMEOUT)
            core = process.take_core(kind)
        for label, result in (("--pid", live),
                              (kind + " core", run_scenarios.run_coreanalyze(
                                  coreanalyze, core, interpreter, ["--native", "--json"]))):
            if result.returncode not in (0, 5):
                problems.append("%s: exit %d: %s" % (label, result.returncode,
                                                     result.stderr.decode("utf-8", "replace")[-300:]))
                continue
            problems += check_document(json.loads(result.stdout), truth, label)
        return ("FAIL" if problems else "PASS"), problems
    finally:
        if saved is None:
            os.environ.pop("PYTHONPERFSUPPORT", None)
        else:
            os.environ["PYTHONPERFSUPPORT"] = saved
        shutil.rmtree(workdir, ignore_errors=True)


JIT_PROGRAM = "jit_blocked.py"
GENERATED = "[generated code: JIT]"


def jit_case(coreanalyze, interpreter):
    workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-jit-")
    try:
        kind = cores.single_core_kind(interpreter)
        with cores.ScenarioProcess(interpreter, JIT_PROGRAM, workdir,
                                   raise_core_limit=(kind == "kernel")) as process:
            truth = process.wait_for_ground_truth()
            if not truth.get("jit", {}).get("enabled"):
                return "SKIP", ["no JIT (3.13 on, built with --enable-experimental-jit)"]
            core = process.take_core(kind)
        result = run_scenarios.run_coreanalyze(coreanalyze, core, interpreter, ["--native", "--json"])
        if result.returncode not in (0, 5):
            return "FAIL", ["exit %d: %s" % (result.returncode, result.stderr.decode("utf-8", "replace")[-300:])]
        document = json.loads(result.stdout)
        problems = []
        for ident, truth_thread in truth["threads"].items():
            thread = [t for t in document.get("threads", [])
                      if t.get("native_thread_id") == truth_thread.get("native_id")]
            if not thread:
                problems.append("no thread with LWP %s" % truth_thread.get("native_id"))
                continue
            stack = thread[0].get("native_stack") or {}
            frames = stack.get("frames") or []
            got = [(f.get("file"), f.get("line"), f.get("function")) for f in frames
                   if f.get("kind") == "python"]
            want = [tuple(frame[:3]) for frame in truth_thread["frames"]]
            if got != want:
                problems.append("Python frames %s, want %s" % (got, want))
            if not any(f.get("symbol") == GENERATED for f in frames):
                problems.append("no %s frame" % GENERATED)
            if "code made at run time" not in (stack.get("end_reason") or ""):
                problems.append("end_reason %r does not say the walk ends in the JIT's code"
                                % stack.get("end_reason"))
        return ("FAIL" if problems else "PASS"), problems
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    args = interpreters.driver_arguments(__doc__)
    results = Results()
    for name, interpreter in interpreters.each_installed(
            args.interpreter or interpreters.names("integration"), results):
        try:
            status, details = run_interpreter(args.coreanalyze, interpreter)
        except (cores.CoreError, subprocess.TimeoutExpired, KeyError, ValueError) as error:
            status, details = "FAIL", ["%s: %s" % (type(error).__name__, error)]
        results.report(status, name, details)
        try:
            status, details = jit_case(args.coreanalyze, interpreter)
        except (cores.CoreError, subprocess.TimeoutExpired, KeyError, ValueError) as error:
            status, details = "FAIL", ["%s: %s" % (type(error).__name__, error)]
        results.report(status, name + " JIT", details)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
