#!/usr/bin/python3
"""Integration test: run each scenario program under a real interpreter, take a core of it, run
coreanalyze on the core and compare with the ground truth the program wrote about itself.

  run_scenarios.py --interpreter debian-3.11 --coreanalyze build/bin/coreanalyze
  run_scenarios.py --interpreter ~/.pyenv/versions/3.12.1/bin/python --scenario deadlock
  run_scenarios.py --core examples/deadlock.core.zst --truth examples/deadlock.truth.json

Exit status: 0 all passed (some may be skipped), 1 a mismatch or error, 2 usage, 77 the
interpreter is not installed (ctest's SKIP_RETURN_CODE). HANGPY_KEEP_CORES=1 keeps the core and
ground truth of a failed case and prints where.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import cores  # noqa: E402
import interpreters  # noqa: E402
from results import SKIP, Results  # noqa: E402

COREANALYZE_TIMEOUT = 120
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# scenario name -> (program in tests/programs, core kinds to take)
SCENARIOS = {
    "deadlock": ("deadlock.py", ("gcore", "kernel")),
    "deep_recursion": ("deep_recursion.py", ("gcore",)),
    "unicode_names": ("unicode_names.py", ("gcore",)),
    "generator": ("blocking_generator.py", ("gcore",)),
    "lambda": ("blocking_lambda.py", ("gcore",)),
    "method": ("blocking_method.py", ("gcore",)),
    "exec": ("blocking_exec.py", ("gcore",)),
    "asyncio_task": ("asyncio_task.py", ("gcore",)),
    "asyncio_hang": ("asyncio_hang.py", ("gcore", "kernel")),
    "native_thread": ("native_thread.py", ("gcore",)),
    "finalizing": ("finalizing.py", ("gcore", "kernel")),
}


def expected_signal(kind):
    """What NT_SIGINFO must say of each kind of core: the kernel's records this test's
    kill(SIGABRT) with its sender; gdb's gcore records the SIGSTOP that stopped the process."""
    if kind == "kernel":
        return {"number": signal.SIGABRT, "code": 0, "sender_pid": os.getpid(),  # SI_USER
                "sender_uid": os.getuid()}
    return {"number": signal.SIGSTOP}


def run_coreanalyze(coreanalyze, core, interpreter, extra_args):
    argv = [coreanalyze, core] + list(extra_args)
    if interpreter.root is not None:
        argv += ["--sysroot", interpreter.root]
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=COREANALYZE_TIMEOUT)


CONTEXT_LINES = 2


def source_reader(interpreter):
    """read_lines(file) for compare: a source file as this machine reads it (inside the
    interpreter's root for a chroot), or None."""
    def read_lines(file_name):
        if not file_name or file_name.startswith("<"):
            return None
        return compare.source_lines(interpreter.host_path(file_name) if interpreter.root
                                    else file_name)
    return read_lines


def check_source_views(coreanalyze, core, interpreter, truth):
    """Carets under the source lines (3.11+) and --context, against the source files as this
    machine reads them (inside the interpreter's root for a chroot)."""
    read_lines = source_reader(interpreter)
    text = run_coreanalyze(coreanalyze, core, interpreter, ["--no-color"])
    problems = compare.compare_carets(truth, text.stdout.decode("utf-8", "replace"), read_lines)
    result = run_coreanalyze(coreanalyze, core, interpreter,
                             ["--json", "--context", str(CONTEXT_LINES)])
    try:
        report = json.loads(result.stdout.decode("utf-8"))
    except ValueError as error:
        return problems + ["coreanalyze --json --context printed no JSON (%s)" % error]
    return problems + compare.compare_context(report, read_lines, CONTEXT_LINES)


def check_core(coreanalyze, core, interpreter, truth, extra_args=(), signal_info=None,
               source_root=None, allowed_warnings=()):
    """Problems found comparing coreanalyze's JSON and text output with the ground truth;
    `extra_args` go to both runs; `signal_info`: what process.signal_info must hold;
    `allowed_warnings`: beginnings of warnings that are true of this core (any other fails);
    `source_root`: the directory coreanalyze sees as / when it is not this machine's (a chroot
    it runs in), so the source lines expected are the ones it can read."""
    extra_args = list(extra_args)
    result = run_coreanalyze(coreanalyze, core, interpreter, ["--json"] + extra_args)
    stderr = result.stderr.decode("utf-8", "replace").strip()
    if result.returncode != 0:
        problems = ["coreanalyze --json exited %d; stderr: %s" % (result.returncode, stderr)]
    else:
        problems = []
    try:
        report = json.loads(result.stdout.decode("utf-8"))
    except ValueError as error:
        if problems:  # the exit code and stderr already say why
            return problems
        return ["coreanalyze --json printed no JSON (%s); stderr: %s" % (error, stderr)]
    problems += compare.compare_json(truth, report)
    if signal_info:
        problems += compare.compare_signal(report, signal_info)
    for warning in report.get("warnings") or []:
        if not any(warning.startswith(allowed) for allowed in allowed_warnings):
            problems.append("warning: %s" % warning)
    if problems:
        return problems
    text = run_coreanalyze(coreanalyze, core, interpreter, ["--no-color"] + extra_args)
    if text.returncode != 0:
        return ["coreanalyze (text) exited %d" % text.returncode]
    read_lines = source_reader(interpreter)
    if "--sysroot" in extra_args[:-1]:
        # coreanalyze reads the sources under the root it is given: so does the comparison.
        root = extra_args[extra_args.index("--sysroot") + 1]
        read_lines = source_reader(interpreters.Interpreter("sysroot", None, root=root))
    elif source_root is not None:
        read_lines = source_reader(interpreters.Interpreter("its root", None, root=source_root))
    return compare.compare_text(truth, text.stdout.decode("utf-8", "replace"), read_lines)


def check_stop_sentence(coreanalyze, core, interpreter, kind):
    """The text's process line says why the process stopped as the test knows it: this test's
    kill(SIGABRT) for a kernel core; for gdb's gcore, the debugger's own attach (state t and its
    SIGSTOP), never a signal "sent by the kernel" to the program."""
    text = run_coreanalyze(coreanalyze, core, interpreter, ["--no-color"]).stdout.decode(
        "utf-8", "replace")
    facts = next((line for line in text.splitlines() if line.startswith("Parent PID")), "")
    if kind == "kernel":
        want, wrong = "signal SIGABRT (6), sent by kill() from PID %d" % os.getpid(), None
    else:
        want, wrong = "state t (traced): stopped by the debugger that wrote this core", "sent by"
    problems = []
    if want not in facts:
        problems.append("process line %r lacks %r" % (facts, want))
    if wrong and wrong in facts:
        problems.append("process line %r names a sender of the debugger's stop" % facts)
    return problems


def keep_for_debugging(workdir, label):
    kept = tempfile.mkdtemp(prefix="hangpy-failed-%s-" % label)
    for name in os.listdir(workdir):
        if name.startswith("core") or name == "truth.json":
            shutil.move(os.path.join(workdir, name), kept)
    return kept


class ScenarioSkipped(Exception):
    """The scenario does not apply here; the message says why."""


def default_kind(scenario):
    """The kind of core every run of the scenario takes (its first)."""
    return SCENARIOS[scenario][1][0]


def capture(interpreter, scenario, kind, workdir, program_dir=None):
    """Run one scenario under `interpreter` and take a core of it, both in `workdir` (a
    directory the process can see: inside the interpreter's root, if it has one).

    Returns (core path, ground truth path, ground truth); the process is gone by then. Raises
    ScenarioSkipped when the scenario or the core kind does not apply, cores.CoreError or
    subprocess.TimeoutExpired when running it failed. `program_dir`: see cores.ScenarioProcess.
    """
    program = SCENARIOS[scenario][0]
    if kind == "kernel" and cores.kernel_core_unavailable_reason():
        raise ScenarioSkipped(cores.kernel_core_unavailable_reason())
    with cores.ScenarioProcess(interpreter, program, workdir, raise_core_limit=(kind == "kernel"),
                               program_dir=program_dir) as process:
        truth = process.wait_for_ground_truth()
        if "skip" in truth:
            raise ScenarioSkipped(truth["skip"])
        core = process.take_core(kind)
    return core, process.truth_path, truth


def check_each_interpreter(names, scenario, prefix, check, kind_for=None):
    """Takes a core of `scenario` under each interpreter of `names` that is installed and reports
    each (label, problems) that `check(core, truth, interpreter, workdir)` returns (problems a
    string: the case is skipped, that is why). The core is a gcore, or what `kind_for(interpreter)`
    says. Returns the exit status: 0 passed, 1 failed, 77 (skip) when none of them is
    installed."""
    results = Results()
    for name, interpreter in interpreters.each_installed(names, results):
        workdir = scenario_workdir(interpreter, prefix)
        try:
            kind = kind_for(interpreter) if kind_for else "gcore"
            core, _, truth = capture(interpreter, scenario, kind, workdir)
            for label, problems in check(core, truth, interpreter, workdir):
                if isinstance(problems, str):
                    results.report("SKIP", "%s %s" % (name, label), [problems])
                else:
                    results.check("%s %s" % (name, label), problems)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


def scenario_workdir(interpreter, prefix):
    """A new temporary directory the interpreter's processes can see (a chroot's processes see
    only files inside it, so for those it is in the chroot's /tmp)."""
    parent = interpreter.host_path("/tmp") if interpreter.root and not interpreter.emulator else None
    return tempfile.mkdtemp(prefix=prefix, dir=parent)


def check_in_workdirs(names, results, prefix, label, case):
    """For each installed interpreter of `names`: case(interpreter, workdir) -> problems, checked
    as `label % name`, in a scenario_workdir removed after."""
    for name, interpreter in interpreters.each_installed(names, results):
        workdir = scenario_workdir(interpreter, prefix)
        try:
            results.check(label % name, case(interpreter, workdir))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


def json_of(argv, problems, timeout=60):
    """The JSON document `argv` prints, or None with a problem when it fails."""
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if result.returncode != 0:
        problems.append("%s: exit %d: %s" % (" ".join(argv[1:]), result.returncode,
                                             result.stderr.decode("utf-8", "replace")[-400:]))
        return None
    return json.loads(result.stdout.decode("utf-8"))


# gdb 13's gcore of a process in a chroot saves parts of the other threads' stacks as zeros (the
# same addresses read fine from /proc/PID/mem and from a kernel core), which cuts their Python
# frames short. The kernel core of the same scenario covers it. Where the scenario is still read
# from such a gcore, coreanalyze's warning that those stacks are zeros is true, and allowed.
GCORE_LOSES_THREAD_STACKS_IN_CHROOTS = ("deadlock", "asyncio_hang")
ZEROED_STACKS_WARNING = "this core holds only zeros at the stack pointer of"


def run_case(coreanalyze, interpreter, scenario, kind):
    """(status, details): status is PASS, FAIL or SKIP."""
    if interpreter.root and kind == "gcore" and scenario in GCORE_LOSES_THREAD_STACKS_IN_CHROOTS:
        return "SKIP", ["gcore of a chrooted process loses other threads' stacks; see the kernel core"]
    workdir = scenario_workdir(interpreter, "hangpy-it-")
    try:
        core, _, truth = capture(interpreter, scenario, kind, workdir)
        allowed = (ZEROED_STACKS_WARNING,) if interpreter.root and kind == "gcore" else ()
        problems = check_core(coreanalyze, core, interpreter, truth,
                              signal_info=expected_signal(kind), allowed_warnings=allowed)
        if not problems:
            problems = check_source_views(coreanalyze, core, interpreter, truth)
        if not problems:
            problems = check_stop_sentence(coreanalyze, core, interpreter, kind)
        if problems and os.environ.get("HANGPY_KEEP_CORES") == "1":
            problems.append("kept core and ground truth in %s"
                            % keep_for_debugging(workdir, scenario))
        return ("FAIL" if problems else "PASS"), problems
    except ScenarioSkipped as reason:
        return "SKIP", [str(reason)]
    except (cores.CoreError, subprocess.TimeoutExpired) as error:
        return "FAIL", [str(error)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interpreter",
                        help="a name (%s) or an executable path" % ", ".join(
                            sorted(interpreters.INTERPRETERS)))
    parser.add_argument("--coreanalyze", default=os.path.join(REPO, "build", "bin", "coreanalyze"))
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS),
                        help="run only this scenario (repeatable)")
    parser.add_argument("--core-kind", choices=cores.CORE_KINDS,
                        help="only this kind of core (default: the scenario's kinds)")
    parser.add_argument("--core", help="check this saved core (.zst is fine) instead of scenarios")
    parser.add_argument("--truth", help="the ground truth JSON written with --core's core")
    args = parser.parse_args()
    if bool(args.core) != bool(args.truth) or bool(args.core) == bool(args.interpreter):
        parser.error("give --interpreter, or --core and --truth")
    return args


def decompress(path, directory):
    """Decompress a .zst file into `directory`; returns the new file's path."""
    plain = os.path.join(directory, os.path.basename(path)[:-len(".zst")])
    with open(plain, "wb") as out:
        subprocess.run(["zstd", "-qdc", path], stdout=out, check=True)
    return plain


def check_saved_core(coreanalyze, core, truth_path):
    """Compare a saved core (e.g. examples/deadlock.core.zst) with its ground truth file."""
    with open(truth_path) as truth_file:
        truth = json.load(truth_file)
    workdir = tempfile.mkdtemp(prefix="hangpy-saved-")
    try:
        if core.endswith(".zst"):
            core = decompress(core, workdir)
        host = interpreters.Interpreter("saved", None)
        problems = check_core(coreanalyze, core, host, truth)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    results = Results()
    results.check(core, problems)
    return results.finish()


def main():
    args = parse_args()
    if not os.access(args.coreanalyze, os.X_OK):
        print("coreanalyze not found at %s (build it first)" % args.coreanalyze, file=sys.stderr)
        return 1
    if args.core:
        return check_saved_core(args.coreanalyze, args.core, args.truth)
    try:
        interpreter = interpreters.resolve(args.interpreter)
    except KeyError as error:
        print(error.args[0], file=sys.stderr)
        return 2
    if interpreter is None:
        print("SKIP: " + interpreters.not_installed(args.interpreter))
        return SKIP
    print("interpreter: %r, coreanalyze: %s" % (interpreter, args.coreanalyze))
    results = Results()
    for scenario in args.scenario or sorted(SCENARIOS):
        kinds = [args.core_kind] if args.core_kind else SCENARIOS[scenario][1]
        for kind in kinds:
            status, details = run_case(args.coreanalyze, interpreter, scenario, kind)
            results.report(status, "%s (%s core)" % (scenario, kind), details)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
