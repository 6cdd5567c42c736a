#!/usr/bin/python3
"""Integration test (issue 22): what a process names is untrusted. A real Debian python3.11
process (tests/programs/hostile_names.py), started as user nobody when this runs as root, blocks in
code whose file names are /dev/zero, a FIFO, a file only root may read, and a climb out of any
--sysroot, in threads whose names (and a function's) carry terminal escapes. Each of these runs
under a 1 GiB address-space limit and a 30 s timeout, and must end, print no raw escape
(ESC, BEL, C1 CSI) and no line of the secret file:

- `--pid PID` text, and `--json --context 100`;
- on its gcore: text with `--context 100`, `--json --context 100`, `--sysroot EMPTY --context 5`,
  `triage` text and its `--html` page;
- as root on a process of nobody's: one note says source lines of a file it could not read were
  not shown.

And inputs that are no core end at once with exit 3: `-` from /dev/zero and from `yes`, a FIFO
given as the core.

Exit status: 0 passed, 1 failed, 77 Debian's python3.11 is not installed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
from results import Results  # noqa: E402

PYTHON = "/usr/bin/python3.11"
TIMEOUT = 30
ADDRESS_SPACE_LIMIT = 1 << 30
SECRET = b"SECRET-LINE-OF-A-ROOT-ONLY-FILE"
RAW = (b"\x1b", b"\x07", b"\xc2\x9b")
NOBODY = 65534


def sanitized(binary):
    """Whether `binary` is built with AddressSanitizer, which reserves terabytes of address space
    for its shadow and so cannot run under an address-space limit."""
    with open(binary, "rb") as stream:
        return b"__asan_init" in stream.read()


SANITIZED = False  # set in main()


def limited(argv):
    """`argv` under a memory bound: an address-space limit, or ASan's own RSS limit for a
    sanitized build."""
    if SANITIZED:
        options = os.environ.get("ASAN_OPTIONS", "")
        return ["env", "ASAN_OPTIONS=%s%shard_rss_limit_mb=%d" % (options, ":" if options else "",
                                                                   ADDRESS_SPACE_LIMIT >> 20)] + argv
    return ["prlimit", "--as=%d" % ADDRESS_SPACE_LIMIT, "--"] + argv


def run(argv, stdin=subprocess.DEVNULL, shell=False):
    """(exit code or None when it ran past TIMEOUT, stdout, stderr, seconds); whatever it started
    is killed at the end (a shell's pipeline too)."""
    started = time.time()
    process = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               shell=shell, start_new_session=True)
    try:
        out, err = process.communicate(timeout=TIMEOUT)
        code = process.returncode
    except subprocess.TimeoutExpired:
        out, err, code = b"", b"", None
    finally:
        try:
            os.killpg(process.pid, 9)
        except OSError:
            pass
        process.wait()
    return code, out, err, time.time() - started


def output_problems(label, code, out, err, seconds, codes=(0, 5)):
    problems = []
    if code is None:
        return ["%s: still running after %d s" % (label, TIMEOUT)]
    if code not in codes:
        problems.append("%s: exit %d, want %s: %s" % (label, code, codes, err[-300:]))
    for raw in RAW:
        for name, data in (("stdout", out), ("stderr", err)):
            if raw in data:
                problems.append("%s: raw %r in %s" % (label, raw, name))
    if SECRET in out or SECRET in err:
        problems.append("%s: printed a line of the file only root may read" % label)
    return problems


def main():
    parser = __import__("argparse").ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    if not os.access(PYTHON, os.X_OK) or shutil.which("prlimit") is None:
        results.report("SKIP", "hostile names", ["%s or prlimit is missing" % PYTHON])
        return results.finish(skip_when_none_ran=True)
    global SANITIZED
    SANITIZED = sanitized(args.coreanalyze)
    as_nobody = os.geteuid() == 0 and shutil.which("setpriv") is not None
    workdir = tempfile.mkdtemp(prefix="hangpy-hostile-")
    os.chmod(workdir, 0o777)
    coreanalyze = args.coreanalyze
    try:
        secret = os.path.join(workdir, "secret.txt")
        with open(secret, "wb") as out:
            out.write(SECRET + b"\n" + SECRET + b"\n")
        os.chmod(secret, 0o600)
        fifo = os.path.join(workdir, "names.fifo")
        os.mkfifo(fifo)
        os.chmod(fifo, 0o666)
        truth_path = os.path.join(workdir, "truth.json")
        program = os.path.join(workdir, "hostile_names.py")
        shutil.copy(os.path.join(cores.PROGRAMS, "hostile_names.py"), program)
        os.chmod(program, 0o644)
        argv = [PYTHON, program, truth_path, fifo, secret]
        if as_nobody:
            argv = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"] + argv
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.time() + 30
            while not os.path.exists(truth_path) and time.time() < deadline and process.poll() is None:
                time.sleep(0.05)
            if not os.path.exists(truth_path):
                results.report("FAIL", "hostile names: the program never blocked: %r" % process.stdout.read()[-400:])
                return results.finish()
            time.sleep(0.5)
            with open(truth_path) as stream:
                pid = json.load(stream)["pid"]
            checks = [("--pid text", [coreanalyze, "--pid", str(pid)]),
                      ("--pid --json --context 100", [coreanalyze, "--pid", str(pid), "--json", "--context", "100"])]
            for label, command in checks:
                code, out, err, seconds = run(limited(command))
                problems = output_problems(label, code, out, err, seconds)
                if label == "--pid text" and as_nobody and b"could not read them itself" not in err:
                    problems.append("no note that the root-only file was not shown: %r" % err[-400:])
                results.check("hostile names: %s (%.1f s)" % (label, seconds), problems)
            core = cores.gcore(pid, os.path.join(workdir, "core"))
        finally:
            os.killpg(process.pid, 9)
            process.wait()
        empty = os.path.join(workdir, "empty-root")
        os.mkdir(empty)
        html = os.path.join(workdir, "triage.html")
        for label, command in (("core text --context 100", [coreanalyze, core, "--context", "100"]),
                               ("core --json --context 100", [coreanalyze, core, "--json", "--context", "100"]),
                               ("core --sysroot EMPTY --context 5", [coreanalyze, core, "--sysroot", empty, "--exe",
                                                                     PYTHON, "--context", "5"]),
                               ("triage text and --html", [coreanalyze, "triage", core, "--html", html])):
            code, out, err, seconds = run(limited(command))
            problems = output_problems(label, code, out, err, seconds)
            if os.path.exists(html) and label.startswith("triage"):
                with open(html, "rb") as stream:
                    page = stream.read()
                problems += output_problems("the --html page", 0, page, b"", 0)
            results.check("hostile names: %s (%.1f s)" % (label, seconds), problems)
        for label, command, shell in (("- < /dev/zero", "%s - < /dev/zero" % coreanalyze, True),
                                      ("yes | -", "yes | %s -" % coreanalyze, True),
                                      ("a FIFO as the core", [coreanalyze, fifo], False)):
            code, out, err, seconds = run(command if shell else limited(command), shell=shell)
            problems = output_problems(label, code, out, err, seconds, codes=(3,))
            if code is not None and len(err.splitlines()) != 1:
                problems.append("%s: want one line on stderr: %r" % (label, err))
            results.check("not a core: %s ends at once with exit 3 (%.2f s)" % (label, seconds), problems)
    except cores.CoreError as error:
        results.report("FAIL", "hostile names: %s" % error)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish(skip_when_none_ran=True)


if __name__ == "__main__":
    sys.exit(main())
