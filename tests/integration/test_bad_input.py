#!/usr/bin/python3
"""coreanalyze on inputs that are not (whole) cores: the right exit code and a one-line message.

  test_bad_input.py --coreanalyze build/bin/coreanalyze

Exit codes of coreanalyze: 2 usage, 3 unreadable input / not a core, 4 no Python interpreter
found, 5 partial result, 7 snapshot not written, 8 truncated core, 9 a binary is not the core's.
Most cases use a snapshot core of the corpus (any machine); the cases that need a real core take one
of the deadlock program under Debian's /usr/bin/python3.11 and are skipped when that interpreter is
missing.
"""
import hashlib
import pty
import select
import argparse
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

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL_CORE_INTERPRETER = "debian-3.11"
TIMEOUT = 120


CORPUS_CORE = os.path.join(REPO, "tests", "corpus", "debian-3.11", "deadlock.core.zst")


class Run(object):
    def __init__(self, argv, stdin=subprocess.DEVNULL, env=None):
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=stdin, timeout=TIMEOUT, env=env)
        self.argv = argv
        self.code = result.returncode
        self.stdout = result.stdout.decode("utf-8", "replace")
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


def first_line_starts(run, prefix):
    if not run.stderr_lines or not run.stderr_lines[0].startswith(prefix):
        return ["want the first stderr line to start %r" % prefix, run.describe()]
    return []


def digest(path):
    with open(path, "rb") as stream:
        return hashlib.sha256(stream.read()).hexdigest()


class Skipped(object):
    """What a check gives instead of its problems when it cannot run here, and why."""

    def __init__(self, reason):
        self.reason = reason


class NoTerminal(Exception):
    """No pseudo-terminal can be had here (a chroot without devpts mounted, a container)."""


def run_on_a_terminal(argv, env):
    """stdout of argv run with a pseudo-terminal as its stdout (where color is on by default),
    and its stderr. NoTerminal when no pseudo-terminal can be had."""
    try:
        leader, follower = pty.openpty()
    except OSError as error:
        raise NoTerminal("no pseudo-terminal can be had here (pty.openpty: %s; is devpts mounted "
                         "on /dev/pts, with /dev/ptmx?)" % error)
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(argv, stdout=follower, stderr=errors, env=env)
        os.close(follower)
        output = b""
        while True:
            ready, _, _ = select.select([leader], [], [], TIMEOUT)
            if not ready:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            output += chunk
        process.wait(timeout=TIMEOUT)
        os.close(leader)
        errors.seek(0)
        return output.decode("utf-8", "replace"), errors.read().decode("utf-8", "replace")


def color_checks(coreanalyze, core):
    """Problems of NO_COLOR and --no-color on a terminal, or Skipped without one."""
    try:
        colored, colored_errors = run_on_a_terminal([coreanalyze, core],
                                                    dict(os.environ, NO_COLOR=""))
        plain, plain_errors = run_on_a_terminal([coreanalyze, core], dict(os.environ, NO_COLOR="1"))
        flag, flag_errors = run_on_a_terminal([coreanalyze, core, "--no-color"], os.environ)
    except NoTerminal as error:
        return Skipped(str(error))
    problems = []
    if "\033[" not in colored:
        problems.append("no color on a terminal (with an empty NO_COLOR); stderr %r"
                        % colored_errors[-600:])
    if "\033[" in plain:
        problems.append("color on a terminal with NO_COLOR=1; stderr %r" % plain_errors[-600:])
    if "\033[" in flag:
        problems.append("color on a terminal with --no-color; stderr %r" % flag_errors[-600:])
    return problems


def snapshot_checks(coreanalyze, workdir):
    """(name, problems) of the cases a corpus snapshot core can show on any machine."""
    core = os.path.join(workdir, "snapshot.core")
    subprocess.run(["zstd", "-q", "-d", "-f", CORPUS_CORE, "-o", core], check=True)
    original = digest(core)
    reference = Run([coreanalyze, core])
    checks = [("snapshot core reads", expect_success(reference))]

    def refuses_to_overwrite(name, target):
        run = Run([coreanalyze, core, "--snapshot", target])
        problems = expect(run, (7,), True)
        if digest(core) != original:
            problems.append("the input core was changed")
        if run.stdout != reference.stdout:
            problems.append("the stacks were not printed as without --snapshot")
        checks.append((name, problems))

    refuses_to_overwrite("--snapshot onto the input core", core)
    hard_link = os.path.join(workdir, "hard-link.core")
    os.link(core, hard_link)
    refuses_to_overwrite("--snapshot onto a hard link of the input", hard_link)
    symlink = os.path.join(workdir, "symlink.core")
    os.symlink(core, symlink)
    refuses_to_overwrite("--snapshot onto a symlink to the input", symlink)

    unwritable = os.path.join(workdir, "no-such-dir", "out.core")
    run = Run([coreanalyze, core, "--snapshot", unwritable])
    problems = expect(run, (7,), True)
    if run.stderr_lines and "No such file or directory" not in run.stderr_lines[0]:
        problems.append("want the system's reason in the message")
    if run.stdout != reference.stdout:
        problems.append("the stacks were not printed")
    checks.append(("--snapshot into a missing directory", problems))

    written = os.path.join(workdir, "written.core")
    run = Run([coreanalyze, core, "--snapshot", written])
    problems = expect_success(run)
    if not problems and Run([coreanalyze, written]).stdout != reference.stdout:
        problems.append("the written snapshot does not read the same")
    leftovers = [name for name in os.listdir(workdir) if name.startswith(".written.core.")]
    if leftovers:
        problems.append("temporary files left: %s" % leftovers)
    checks.append(("--snapshot to a new file", problems))

    # Cut past the program header table (its size depends on how many ranges the snapshot
    # keeps), so the cut falls in the data: first soon after the table, then further on.
    with open(core, "rb") as source:
        header = source.read(64)
    phoff, = struct.unpack_from("<Q", header, 32)
    phentsize, phnum = struct.unpack_from("<HH", header, 54)
    table_end = phoff + phentsize * phnum
    for size in (max(4096, table_end + 1024), max(20000, table_end + 16384)):
        truncated = os.path.join(workdir, "truncated-%d.core" % size)
        with open(core, "rb") as source, open(truncated, "wb") as sink:
            sink.write(source.read(size))
        run = Run([coreanalyze, truncated])
        problems = expect(run, (8,), True) + first_line_starts(
            run, "coreanalyze: the core is truncated at %d of " % size)
        checks.append(("core truncated to %d bytes" % size, problems))

    with open(core, "rb") as stream:
        run = Run([coreanalyze, "-"], stdin=stream)
    problems = expect_success(run)
    if run.stdout != reference.stdout:
        problems.append("'- < core' does not read as the file does")
    checks.append(("core redirected to stdin", problems))
    with open(core, "rb") as stream:
        piped = subprocess.Popen(["cat"], stdin=stream, stdout=subprocess.PIPE)
        run = Run([coreanalyze, "-"], stdin=piped.stdout)
        piped.wait()
    problems = expect_success(run)
    if run.stdout != reference.stdout:
        problems.append("a core piped to '-' does not read as the file does")
    checks.append(("core piped to stdin", problems))
    run = Run([coreanalyze, "-"])
    checks.append(("empty stdin", expect(run, (3,), True) + (
        [] if run.stderr_lines and "standard input" in run.stderr_lines[0]
        else ["want the message to name standard input"])))

    checks.append(("NO_COLOR and --no-color", color_checks(coreanalyze, core)))

    checks.append(("--python 3.12t names the layouts that exist",
                   expect(Run([coreanalyze, core, "--python", "3.12t"]), (2,), True)
                   + first_line_starts(Run([coreanalyze, core, "--python", "3.12t"]),
                                       "coreanalyze: --python 3.12t: there is no such layout; "
                                       "layouts: 2.7, ")))
    return checks


def expect_success(run):
    return [] if run.code == 0 else ["want exit 0", run.describe()]


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
        # Numbers too big for an int once ended coreanalyze with std::out_of_range (SIGABRT).
        ("--python with a huge minor", [coreanalyze, empty, "--python", "3.99999999999"], (2,),
         True),
        ("--python with a huge major", [coreanalyze, empty, "--python", "99999999999999999999.1"],
         (2,), True),
        ("--python of no layout", [coreanalyze, empty, "--python", "3.99"], (2,), True),
        ("--sysroot that does not exist", [coreanalyze, empty, "--sysroot", "/no/such/dir"], (2,),
         True),
        ("--lib-path that does not exist", [coreanalyze, empty, "--lib-path", "/tmp:/no/such/dir"],
         (2,), True),
        ("--exe that does not exist", [coreanalyze, empty, "--exe", "/no/such/python"], (2,), True),
        ("--context that is not a count", [coreanalyze, empty, "--context", "two"], (2,), True),
        ("--context beyond 100 lines", [coreanalyze, empty, "--context", "99999999999"], (2,),
         True),
    ]


def cases_with_core(coreanalyze, workdir, core):
    empty_sysroot = os.path.join(workdir, "empty-sysroot")
    os.mkdir(empty_sysroot)
    truncated = truncated_copy(core, os.path.join(workdir, "truncated.core"))
    other_python = interpreters.resolve("pyenv-3.11")
    other_executable = other_python.executable if other_python else "/bin/true"
    return [
        ("bad --python value", [coreanalyze, core, "--python", "not-a-version"], (2,), False),
        # Half a real core: the first stacks may still read (5); when none does, the cause is
        # the truncation (8), never "no interpreter" or "layout does not fit".
        ("truncated core", [coreanalyze, truncated], (5, 8), False),
        ("--exe of another build of Python", [coreanalyze, core, "--exe", other_executable], (9,),
         True),
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
    results = Results()
    try:
        cases = cases_without_core(args.coreanalyze, workdir)
        core = make_real_core(workdir)
        if core is None:
            results.report("SKIP", "cases that need a real core",
                           [interpreters.not_installed(REAL_CORE_INTERPRETER)])
        else:
            cases += cases_with_core(args.coreanalyze, workdir, core)
        checks = [(name, expect(Run(argv), codes, one_line))
                  for name, argv, codes, one_line in cases]
        if shutil.which("zstd") and os.path.exists(CORPUS_CORE):
            checks += snapshot_checks(args.coreanalyze, workdir)
        else:
            results.report("SKIP", "cases on a snapshot core",
                           ["zstd or %s is missing" % CORPUS_CORE])
        if core is not None:
            run = Run([args.coreanalyze, truncated_copy(core, os.path.join(workdir, "half.core"))])
            checks.append(("truncated core: the cause comes first",
                           first_line_starts(run, "coreanalyze: ")
                           + ([] if "truncated at" in "".join(run.stderr_lines[:1]) else
                              ["want the truncation on the first line", run.describe()])))
            run = Run([args.coreanalyze, core, "--exe", "/bin/true"])
            checks.append(("--exe of another binary: the build-id comes first",
                           first_line_starts(run, "coreanalyze: the build-id of /bin/true is ")))
        for name, problems in checks:
            if isinstance(problems, Skipped):
                results.report("SKIP", name, [problems.reason])
            else:
                results.check(name, problems)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
