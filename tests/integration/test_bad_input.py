#!/usr/bin/python3
"""coreanalyze on inputs that are not (whole) cores: the right exit code and a one-line message.

  test_bad_input.py --coreanalyze build/bin/coreanalyze

Exit codes of coreanalyze: 2 usage, 3 unreadable input / not a core, 4 no Python interpreter
found, 5 partial result. The cases that need a real core take one of the deadlock program under
Debian's /usr/bin/python3.11 and are skipped when that interpreter is missing.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL_CORE_INTERPRETER = "debian-3.11"
TIMEOUT = 120


class Run(object):
    def __init__(self, argv):
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                timeout=TIMEOUT)
        self.argv = argv
        self.code = result.returncode
        self.stderr_lines = result.stderr.decode("utf-8", "replace").strip().splitlines()

    def describe(self):
        return "exit %d, stderr %r" % (self.code, "\n".join(self.stderr_lines)[:600])


def expect(run, codes, one_line):
    """Problems: exit code not in `codes`; stderr empty, or more than one line if `one_line`."""
    problems = []
    if run.code not in codes:
        problems.append("want exit %s" % " or ".join(str(code) for code in codes))
    if not run.stderr_lines:
        problems.append("want a message on stderr")
    elif one_line and len(run.stderr_lines) != 1:
        problems.append("want exactly one line on stderr")
    if problems:
        problems.append(run.describe())
    return problems


def make_real_core(workdir):
    """A kernel core (gcore when core_pattern pipes) of the deadlock program, or None."""
    interpreter = interpreters.resolve(REAL_CORE_INTERPRETER)
    if interpreter is None:
        return None
    kind = "gcore" if cores.kernel_core_unavailable_reason() else "kernel"
    with cores.ScenarioProcess(interpreter, "deadlock.py", workdir,
                               raise_core_limit=(kind == "kernel")) as process:
        process.wait_for_ground_truth()
        return process.take_core(kind)


def truncated_copy(core, path):
    subprocess.run(["cp", "--sparse=always", core, path], check=True)
    os.truncate(path, os.path.getsize(core) // 2)
    return path


def cases_without_core(coreanalyze, workdir):
    empty = os.path.join(workdir, "empty")
    open(empty, "w").close()
    text = os.path.join(workdir, "text.txt")
    with open(text, "w") as text_file:
        text_file.write("this is not an ELF file\n" * 100)
    return [
        ("empty file", [coreanalyze, empty], (3,), True),
        ("text file", [coreanalyze, text], (3,), True),
        ("ELF executable given as core", [coreanalyze, "/bin/true"], (3,), True),
        ("nonexistent path", [coreanalyze, os.path.join(workdir, "no-such-core")], (3,), True),
        ("no arguments", [coreanalyze], (2,), False),
    ]


def cases_with_core(coreanalyze, workdir, core):
    empty_sysroot = os.path.join(workdir, "empty-sysroot")
    os.mkdir(empty_sysroot)
    truncated = truncated_copy(core, os.path.join(workdir, "truncated.core"))
    return [
        ("bad --python value", [coreanalyze, core, "--python", "not-a-version"], (2,), False),
        ("truncated core", [coreanalyze, truncated], (3, 5), True),
        ("binaries missing (empty --sysroot)", [coreanalyze, core, "--sysroot", empty_sysroot],
         (4, 5), True),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coreanalyze", default=os.path.join(REPO, "build", "bin", "coreanalyze"))
    args = parser.parse_args()
    if not os.access(args.coreanalyze, os.X_OK):
        print("coreanalyze not found at %s (build it first)" % args.coreanalyze, file=sys.stderr)
        return 1
    workdir = tempfile.mkdtemp(prefix="hangpy-bad-input-")
    failures = 0
    try:
        cases = cases_without_core(args.coreanalyze, workdir)
        core = make_real_core(workdir)
        if core is None:
            print("SKIP cases that need a real core: %s is not installed" % REAL_CORE_INTERPRETER)
        else:
            cases += cases_with_core(args.coreanalyze, workdir, core)
        for name, argv, codes, one_line in cases:
            problems = expect(Run(argv), codes, one_line)
            print("%-4s %s" % ("FAIL" if problems else "PASS", name))
            for problem in problems:
                print("     " + problem)
            failures += bool(problems)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
