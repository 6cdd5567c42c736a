#!/usr/bin/python3
"""Integration test (issue 35): source lines come only from files a Python process could have
compiled, never from the analyst's side, and memory stays bounded whatever the process names. A
real Debian python3.11 process (tests/programs/hostile_sources.py) blocks in code compiled with
the file names /proc/self/environ, /proc/self/status, /proc/self/cwd/analyst_notes.py, its own
binary and /dev/tty, one thread runs through SPELLINGS frames naming one big standard-library
file by as many spellings, and one thread's name and function carry Unicode direction overrides.
coreanalyze runs with a marker in its own environment and a file holding it in its working
directory. On `--pid` (text, and `--json --context 5`), on its gcore (text) and in `triage`, each
under a 1 GiB address-space limit and a time limit, must:

- never show the marker, nor "Name: coreanalyze" (its own /proc/self/status);
- show every thread, and every frame's file (environ's frame is shown, its "line" is not);
- show the SPELLINGS frames of the big file, and still quote ordinary source (threading.py's line);
- print no raw U+202E, U+202C, U+2066, U+2069 or U+200B, and show the names escaped as \\u{NNNN}
  in text, as JSON escapes that read back as the names in --json;
- never open /dev/tty for reading (strace, where installed: only an O_PATH open may name it).

Exit status: 0 passed, 1 failed, 77 Debian's python3.11 or prlimit is not installed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import test_hostile_names as hostile  # noqa: E402  (run, limited: the same bounds)
from results import Results  # noqa: E402

PYTHON = "/usr/bin/python3.11"
SPELLINGS = 1500
MARKER = "analyst-secret-5f1c9e"
INVISIBLE = ("\u202e", "\u202c", "\u2066", "\u2069", "\u200b")


def shown(text):
    """A name as the text report shows it: invisible code points as \\u{NNNN}."""
    return "".join("\\u{%04x}" % ord(c) if c in INVISIBLE else c for c in text)


def common_problems(label, code, out, err, seconds):
    problems = hostile.output_problems(label, code, out, err, seconds)
    for name, data in (("stdout", out), ("stderr", err)):
        if MARKER.encode() in data:
            problems.append("%s: the analyst's own secret is in %s" % (label, name))
        if b"coreanalyze" in data and b"Name:" in data and b"Name:\tcoreanalyze" in data:
            problems.append("%s: coreanalyze's own /proc/self/status is in %s" % (label, name))
        for char in INVISIBLE:
            if char.encode("utf-8") in data:
                problems.append("%s: raw U+%04X in %s" % (label, ord(char), name))
    return problems


def text_problems(label, out, truth, triage=False):
    text = out.decode("utf-8", "replace")
    problems = []
    for name in truth["threads"]:
        if '"%s"' % shown(name) not in text:
            problems.append("%s: no thread named %s" % (label, shown(name)))
    if triage:
        return problems
    for name, path in truth["threads"].items():
        if path and 'File "%s", line 1' % path not in text:
            problems.append("%s: no frame in File \"%s\"" % (label, path))
    spelled = text.count('pydoc_data/topics.py", line 1, in step') + text.count('pydoc_data/topics.py", line 1, in wait')
    if spelled != truth["spellings"]:
        problems.append("%s: %d frames of the big file's spellings, want %d" % (label, spelled, truth["spellings"]))
    if "signaled = self._cond.wait(timeout)" not in text:
        problems.append("%s: threading.py's source line is not quoted: ordinary sources must still be" % label)
    if "in %s" % shown(truth["bidi_function"]) not in text:
        problems.append("%s: no frame in %s" % (label, shown(truth["bidi_function"])))
    return problems


def json_problems(label, out, truth):
    try:
        document = json.loads(out.decode("utf-8"))
    except ValueError as error:
        return ["%s: not JSON (%s)" % (label, error)]
    names = [thread.get("name") for thread in document.get("threads") or []]
    problems = []
    for name in truth["threads"]:
        if name not in names:
            problems.append("%s: no thread named %r" % (label, name))
    frames = [frame for thread in document.get("threads") or [] for frame in thread.get("frames") or []]
    for frame in frames:
        if frame.get("file") in ("/proc/self/environ", "/proc/self/status", "/dev/tty") and frame.get("context"):
            problems.append("%s: source context quoted from %s: %r" % (label, frame["file"], frame["context"]))
    if not any(frame.get("function") == truth["bidi_function"] for frame in frames):
        problems.append("%s: no frame in function %r" % (label, truth["bidi_function"]))
    return problems


def tty_opened(coreanalyze, pid, workdir):
    """Why /dev/tty was opened for reading under strace, or None. Raises LookupError without
    strace (scripts/install-deps installs it)."""
    if shutil.which("strace") is None:
        raise LookupError("strace is not installed (scripts/install-deps installs it)")
    log = os.path.join(workdir, "strace.log")
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", log,
                    coreanalyze, "--pid", str(pid)], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120)
    with open(log) as stream:
        opens = [line.strip() for line in stream if '"/dev/tty"' in line]
    reading = [line for line in opens if "O_PATH" not in line]
    if reading:
        return "/dev/tty was opened: %s" % reading[0]
    if not opens:
        return "/dev/tty was never even named (strace saw no open of it): the frame was not looked up"
    return None


def main():
    parser = __import__("argparse").ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    if not os.access(PYTHON, os.X_OK) or shutil.which("prlimit") is None:
        results.report("SKIP", "hostile sources", ["%s or prlimit is missing" % PYTHON])
        return results.finish()
    hostile.SANITIZED = hostile.sanitized(args.coreanalyze)
    coreanalyze = os.path.abspath(args.coreanalyze)  # it runs in the analyst's directory below
    workdir = tempfile.mkdtemp(prefix="hangpy-sources-")
    # The analyst's side: a secret in the environment and in a file of the working directory.
    os.environ["HANGPY_ANALYST_TOKEN"] = MARKER
    with open(os.path.join(workdir, "analyst_notes.py"), "w") as out:
        out.write("TOKEN = %r\n" % MARKER)
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        truth_path = os.path.join(workdir, "truth.json")
        process = subprocess.Popen([PYTHON, os.path.join(cores.PROGRAMS, "hostile_sources.py"), truth_path,
                                    str(SPELLINGS)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   env=dict((k, v) for k, v in os.environ.items() if k != "HANGPY_ANALYST_TOKEN"))
        try:
            truth = cores.truth_when_blocked(process, truth_path, 30, settle=0.5)
            if truth is None:
                results.report("FAIL", "hostile sources: the program never blocked: %r" % process.stdout.read()[-400:])
                return results.finish()
            pid = truth["pid"]
            for label, command in (("--pid text", [coreanalyze, "--pid", str(pid)]),
                                   ("--pid --json --context 5", [coreanalyze, "--pid", str(pid), "--json", "--context", "5"])):
                code, out, err, seconds = hostile.run(hostile.limited(command))
                problems = common_problems(label, code, out, err, seconds)
                problems += json_problems(label, out, truth) if "--json" in command else text_problems(label, out, truth)
                results.check("hostile sources: %s (%.1f s)" % (label, seconds), problems)
            try:
                why = tty_opened(coreanalyze, pid, workdir)
                results.check("hostile sources: /dev/tty is named, never opened", [why] if why else [])
            except LookupError as missing:
                results.report("SKIP", "hostile sources: /dev/tty is named, never opened", [str(missing)])
            core = cores.gcore(pid, os.path.join(workdir, "core"))
        finally:
            os.killpg(process.pid, 9)
            process.wait()
        for label, command in (("core text", [coreanalyze, core]),
                               ("triage", [coreanalyze, "triage", core])):
            code, out, err, seconds = hostile.run(hostile.limited(command))
            problems = common_problems(label, code, out, err, seconds)
            problems += text_problems(label, out, truth, triage=label == "triage")
            results.check("hostile sources: %s (%.1f s)" % (label, seconds), problems)
    except cores.CoreError as error:
        results.report("FAIL", "hostile sources: %s" % error)
    finally:
        os.chdir(cwd)
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
