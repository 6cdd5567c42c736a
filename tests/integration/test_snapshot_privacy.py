#!/usr/bin/python3
"""A snapshot keeps only what the analysis read: tests/programs/snapshot_secrets.py, under every
interpreter present, holds three secrets where an analysis reads next to them (os.environ's copies
of the environment; strings of every size allocated between the code objects, functions, frames
and thread states the analysis reads; an argument and a local of every blocked frame). For each:

- `coreanalyze --pid PID --snapshot F` (live, the process stopped) and `coreanalyze CORE
  --snapshot F` of its core: F holds no byte of any secret, nor the secrets' variable names, and
  reads back to the same threads, functions and lines as the core (ground truth: the program's
  own sys._current_frames()); first, the core itself, unscrubbed, must hold every secret's value
  and name (else "no leak" could not fail);
- `coreanalyze CORE --locals --snapshot F`: the local secret is in the output (the analysis read
  it, so the check can fail), the environment's and the heap's secrets are still nowhere in F,
  nor a secret at character 3,000 of a local whose repr is shown only to 1,024 characters.

Exit status: 0 passed, 1 failed, 77 when no interpreter is installed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
from results import Results  # noqa: E402

PROGRAM = "snapshot_secrets.py"
RUN_TIMEOUT = 120
# Markers nobody reads but through a neighbour; each run has its own.
SECRETS = {
    "HANGPY_PRIVACY_ENV": "envsecret%s" % uuid.uuid4().hex,
    "HANGPY_PRIVACY_HEAP": "heapsecret%s" % uuid.uuid4().hex,
    "HANGPY_PRIVACY_LOCAL": "localsecret%s" % uuid.uuid4().hex,
    "HANGPY_PRIVACY_CUT": "cutsecret%s" % uuid.uuid4().hex,
}


def run(argv):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT)
    return (result.returncode, result.stdout.decode("utf-8", "replace"),
            result.stderr.decode("utf-8", "replace"))


def leaks(path, allowed=()):
    """The secrets (values and variable names) that the file at `path` holds."""
    with open(path, "rb") as stream:
        data = stream.read()
    found = []
    for name, value in SECRETS.items():
        if name not in allowed and value.encode() in data:
            found.append("the value of %s" % name)
        if name.encode() in data:
            found.append("the name %s" % name)
    return found


def absent(path):
    """The secrets (values and variable names) that the file at `path` lacks: the unscrubbed core
    must hold them all, or a snapshot holding none of them proves nothing."""
    with open(path, "rb") as stream:
        data = stream.read()
    missing = []
    for name, value in SECRETS.items():
        if value.encode() not in data:
            missing.append("the value of %s" % name)
        if name.encode() not in data:
            missing.append("the name %s" % name)
    return missing


def stacks_of(document):
    """{thread name: [(function, line), ...] outermost first} of a --json document."""
    stacks = {}
    for thread in document.get("threads", []):
        frames = [(frame.get("function"), frame.get("line")) for frame in thread.get("frames", [])]
        stacks[thread.get("name")] = frames  # outermost first, as tracebacks
    return stacks


def analyse(coreanalyze, target, problems, extra=()):
    code, out, err = run([coreanalyze, "--json", target] + list(extra))
    if code not in (0, 5):
        problems.append("coreanalyze --json %s: exit %d: %s" % (target, code, err.strip()[-400:]))
        return None
    return json.loads(out)


def check_truth(label, stacks, truth, problems):
    """Each blocked thread's functions and lines as the program's own traceback gives them."""
    for name, frames in truth["threads"].items():
        if frames is None:
            continue
        want = [(function, line) for _file, line, function in frames]
        got = [(function.split(".")[-1] if function else function, line)
               for function, line in stacks.get(name, [])]
        if got != want:
            problems.append("%s: thread %s: %r, want %r" % (label, name, got, want))


def make_snapshot(coreanalyze, target_args, snapshot, problems, extra=()):
    """Runs coreanalyze on `target_args` with --snapshot; returns its stdout, or None."""
    code, out, err = run([coreanalyze] + list(target_args) + ["--snapshot", snapshot] + list(extra))
    if code not in (0, 5) or not os.path.exists(snapshot):
        problems.append("%s --snapshot: exit %d: %s" % (" ".join(target_args), code, err.strip()[-400:]))
        return None
    return out


def check_interpreter(coreanalyze, name, interpreter, results):
    workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-privacy-")
    try:
        kind = cores.single_core_kind(interpreter)
        with cores.ScenarioProcess(interpreter, PROGRAM, workdir,
                                   raise_core_limit=(kind == "kernel")) as process:
            truth = process.wait_for_ground_truth()
            problems = []
            live_snapshot = os.path.join(workdir, "live.snapshot")
            if make_snapshot(coreanalyze, ["--pid", str(process.pid)], live_snapshot, problems) is not None:
                problems += ["the live snapshot holds %s" % leak for leak in leaks(live_snapshot)]
                document = analyse(coreanalyze, live_snapshot, problems)
                if document is not None:
                    check_truth("live snapshot", stacks_of(document), truth, problems)
            live_problems = problems
            core = process.take_core(kind)

        # The same process unscrubbed: every secret is there to leak, else "none leaked" is vacuous.
        results.check("%s: its %s core, unscrubbed, holds every secret and its name" % (name, kind),
                      ["the core lacks %s: the program never held it, no check below can fail" % what
                       for what in absent(core)])
        results.check("%s: --pid --snapshot keeps no secret and reads back" % name, live_problems)

        problems = []
        # A core of a chroot's process reads its binaries from the chroot; a snapshot needs none.
        on_core = ["--sysroot", interpreter.root] if interpreter.root else []
        whole = analyse(coreanalyze, core, problems, on_core)
        if whole is not None:
            check_truth("%s core" % kind, stacks_of(whole), truth, problems)
        snapshot = os.path.join(workdir, "core.snapshot")
        if make_snapshot(coreanalyze, [core] + on_core, snapshot, problems) is not None:
            problems += ["the snapshot holds %s" % leak for leak in leaks(snapshot)]
            document = analyse(coreanalyze, snapshot, problems)
            if document is not None and whole is not None and stacks_of(document) != stacks_of(whole):
                problems.append("the snapshot reads %r, its core %r" % (stacks_of(document), stacks_of(whole)))
        results.check("%s: %s core --snapshot keeps no secret and reads as its core" % (name, kind), problems)

        problems = []
        snapshot = os.path.join(workdir, "locals.snapshot")
        out = make_snapshot(coreanalyze, [core, "--locals"] + on_core, snapshot, problems)
        if out is not None:
            if SECRETS["HANGPY_PRIVACY_LOCAL"] not in out:
                problems.append("--locals does not show the frames' local secret: %r" % out[-600:])
            # The long argument is shown, cut before its secret: read no further than shown.
            if "long_text = '0" + "x" * 100 not in out or "...(truncated)" not in out:
                problems.append("--locals does not show the long argument, cut: %r" % out[-600:])
            problems += ["the --locals snapshot holds %s" % leak
                         for leak in leaks(snapshot, allowed=("HANGPY_PRIVACY_LOCAL",))]
        results.check("%s: --locals --snapshot keeps the locals it showed, no other secret" % name,
                      problems)
    except cores.CoreError as error:
        results.report("FAIL", "%s: %s" % (name, error))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--interpreter", action="append",
                        help="a name of interpreters.py (default: all of them)")
    args = parser.parse_args()
    # The program's environment is this one's (cores.scenario_environment).
    os.environ.update(SECRETS)
    results = Results()
    names = args.interpreter or interpreters.names("integration")
    for name, interpreter in interpreters.each_installed(names, results):
        check_interpreter(args.coreanalyze, name, interpreter, results)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
