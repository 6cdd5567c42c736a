#!/usr/bin/python3
"""Integration test (issue 22): what a process names is untrusted. A real Debian python3.11
process (tests/programs/hostile_names.py), started as user nobody when this runs as root, blocks in
code whose file names are /dev/zero, a FIFO, a file only root may read, and a climb out of any
--sysroot, in threads whose names (and a function's) carry terminal escapes. Each of these runs
under a 1 GiB address-space limit and a 30 s timeout, and must end, print no raw escape
(ESC, BEL, C1 CSI) and no line of the secret file, and must show every thread (their number) and
every name the program chose, escaped as docs/usage.md promises (base/printable.h): in text, and
in the HTML page's data, C0 controls as \\xNN and C1 as \\u00NN; in --json as JSON escapes them
(C1 as \\u00NN too), reading back as the names themselves:

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

sys.path.insert(0, cores.PROGRAMS)
from hostile_names import ESCAPES  # noqa: E402

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


# The program's names that are not in its truth file: the file and function of its escaped code.
ESCAPED_FILE = "/nonexistent/escapes.py"
ESCAPED_FUNCTION = "wait" + ESCAPES
HTML_DATA = b'<script type="application/json" id="triage-data">'


def terminal(text):
    """`text` as coreanalyze shows a name in text and in the HTML page's data (base/printable.h's
    for_terminal): C0 controls but the tab, and DEL, as \\xNN; C1 controls as \\u00NN."""
    shown = []
    for char in text:
        code = ord(char)
        if (code < 0x20 and char != "\t") or code == 0x7f:
            shown.append("\\x%02x" % code)
        elif 0x80 <= code <= 0x9f:
            shown.append("\\u%04x" % code)
        else:
            shown.append(char)
    return "".join(shown)


class Names(object):
    """What the program named, from its truth file: its threads (and how many there are with the
    main thread), the files of its blocking code, the escaped function."""

    def __init__(self, truth):
        self.threads = sorted(truth["threads"])
        self.thread_count = len(self.threads) + 1
        self.files = sorted(set(truth["files"].values()) | {ESCAPED_FILE})
        self.functions = [ESCAPED_FUNCTION]


def text_names_problems(label, out, names, triage=False):
    """The text report (or triage's text) shows every thread and every name, escaped."""
    text = out.decode("utf-8", "replace")
    problems = []
    if triage:
        titles = [line for line in text.splitlines() if line.lstrip().startswith(("Thread ", "\u00d7"))]
        count = "(%d threads" % names.thread_count
        if not any(line.startswith("Merged ") and count in line for line in text.splitlines()):
            problems.append("%s: no line \"Merged ... %s, ...)\": %r" % (label, count, text[:400]))
    else:
        titles = [line for line in text.splitlines() if line.startswith("Thread 0x")]
        if len(titles) != names.thread_count:
            problems.append("%s: %d threads, want %d: %r" % (label, len(titles), names.thread_count, titles))
    for name in names.threads:
        if not any('"%s"' % terminal(name) in title for title in titles):
            problems.append("%s: no thread named %s" % (label, terminal(name)))
    for path in names.files:
        if 'File "%s"' % terminal(path) not in text:
            problems.append("%s: no frame in File \"%s\"" % (label, terminal(path)))
    for function in names.functions:
        if "in %s" % terminal(function) not in text:
            problems.append("%s: no frame in %s" % (label, terminal(function)))
    return problems


def json_names_problems(label, out, names):
    """--json holds every thread and every name as it is, in JSON's escapes (C1 as \\u00NN)."""
    try:
        document = json.loads(out.decode("utf-8"))
    except ValueError as error:
        return ["%s: not JSON (%s): %r" % (label, error, out[:200])]
    threads = document.get("threads") or []
    problems = []
    if len(threads) != names.thread_count:
        problems.append("%s: %d threads, want %d" % (label, len(threads), names.thread_count))
    frames = [frame for thread in threads for frame in thread.get("frames") or []]
    for what, wanted, got in (("thread named", names.threads, [thread.get("name") for thread in threads]),
                              ("frame in file", names.files, [frame.get("file") for frame in frames]),
                              ("frame in function", names.functions, [frame.get("function") for frame in frames])):
        for name in wanted:
            if name not in got:
                problems.append("%s: no %s %r" % (label, what, name))
            elif json.dumps(name).lower().encode() not in out.lower():
                problems.append("%s: %r is not written %s" % (label, name, json.dumps(name)))
    return problems


def page_names_problems(page, names):
    """The --html page's data holds the process's threads and every name, escaped for the page."""
    start = page.find(HTML_DATA)
    end = page.find(b"</script>", start)
    if start < 0 or end < 0:
        return ["the --html page has no triage data: %r" % page[:200]]
    try:
        data = json.loads(page[start + len(HTML_DATA):end].decode("utf-8"))
    except ValueError as error:
        return ["the --html page's data is not JSON: %s" % error]
    problems = []
    counts = [process.get("threads") for process in data.get("processes") or []]
    if counts != [names.thread_count]:
        problems.append("the --html page: threads of its processes %s, want [%d]" % (counts, names.thread_count))
    stacks = [stack for group in data.get("groups") or [] for stack in group.get("stacks") or []]
    frames = [frame for stack in stacks for frame in stack.get("frames") or []]
    for what, wanted, got in (("thread named", names.threads,
                               [thread.get("name") for stack in stacks for thread in stack.get("threads") or []]),
                              ("frame in file", names.files, [frame.get("file") for frame in frames]),
                              ("frame in function", names.functions, [frame.get("function") for frame in frames])):
        for name in wanted:
            if terminal(name) not in got:
                problems.append("the --html page: no %s %s" % (what, terminal(name)))
    return problems


def main():
    parser = __import__("argparse").ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    if not os.access(PYTHON, os.X_OK) or shutil.which("prlimit") is None:
        results.report("SKIP", "hostile names", ["%s or prlimit is missing" % PYTHON])
        return results.finish()
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
            truth = cores.truth_when_blocked(process, truth_path, 30, settle=0.5)
            if truth is None:
                results.report("FAIL", "hostile names: the program never blocked: %r" % process.stdout.read()[-400:])
                return results.finish()
            pid = truth["pid"]
            names = Names(truth)
            checks = [("--pid text", [coreanalyze, "--pid", str(pid)]),
                      ("--pid --json --context 100", [coreanalyze, "--pid", str(pid), "--json", "--context", "100"])]
            for label, command in checks:
                code, out, err, seconds = run(limited(command))
                problems = output_problems(label, code, out, err, seconds)
                if label == "--pid text" and as_nobody and b"could not read them itself" not in err:
                    problems.append("no note that the root-only file was not shown: %r" % err[-400:])
                if "--json" in command:
                    problems += json_names_problems(label, out, names)
                else:
                    problems += text_names_problems(label, out, names)
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
            if "--json" in command:
                problems += json_names_problems(label, out, names)
            else:
                problems += text_names_problems(label, out, names, triage=label.startswith("triage"))
            if label.startswith("triage"):
                if not os.path.exists(html):
                    problems.append("no --html page written")
                else:
                    with open(html, "rb") as stream:
                        page = stream.read()
                    problems += output_problems("the --html page", 0, page, b"", 0)
                    problems += page_names_problems(page, names)
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
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
