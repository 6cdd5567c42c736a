#!/usr/bin/python3
"""Integration test (issue 35): a thread 100,010 frames deep (tests/programs/very_deep.py, Debian's
python3.11) reads as Python's tracebacks show recursion. On its gcore and live (--pid):

- the text shows the recursive frame three times, then "[Previous frame repeated N more times]"
  with N the rest of what the walker read, and the walker's note that the chain goes on ("frame
  chain too long");
- --json has the same three frames, the third with "repeated": N, the thread's error kept, and
  stays under 1 MB;
- --native (the merged stack) folds the recursion the same way, the native frames outside it kept;
- triage of the core folds the recursion too (the tree's frame "[repeated N more times]", the
  representative's "[Previous frame repeated N more times]") and keeps the walker's note, within
  a 1 GiB address-space limit.
(How fast: scripts/bench, not this test.)

Exit status: 0 passed, 1 failed, 77 Debian's python3.11 is not installed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import test_hostile_names as hostile  # noqa: E402  (run, limited)
from results import Results  # noqa: E402

PYTHON = "/usr/bin/python3.11"
MAX_FRAMES = 100000  # cpython/stack_walker.h kMaxFramesPerThread
REPEATED = re.compile(r"^  \[Previous frame repeated (\d+) more times\]$")


def text_problems(label, out, truth):
    lines = out.decode("utf-8", "replace").splitlines()
    frame = '  File "%s", line %d, in down' % (truth["file"], truth["line"])
    problems = []
    shown = [i for i, line in enumerate(lines) if line == frame]
    if len(shown) != 3:
        problems.append("%s: the recursive frame shown %d times, want 3" % (label, len(shown)))
    counts = [int(m.group(1)) for m in map(REPEATED.match, lines) if m]
    # The walker reads MAX_FRAMES frames, innermost first: threading's waits and the innermost
    # `down` (at its other line), then the recursion's; main() and the module are past the limit.
    others = len([line for line in lines if line.startswith("  File ") and line != frame])
    want = MAX_FRAMES - others - 3
    if counts != [want]:
        problems.append("%s: repeated counts %r, want [%d]" % (label, counts, want))
    if not any("frame chain too long" in line for line in lines):
        problems.append("%s: no note that the frame chain is longer than read" % label)
    if len(out) > 200000:
        problems.append("%s: %d bytes of text" % (label, len(out)))
    return problems


def json_problems(label, out, truth):
    problems = []
    if len(out) > 1 << 20:
        problems.append("%s: %d bytes of JSON" % (label, len(out)))
    try:
        document = json.loads(out.decode("utf-8"))
    except ValueError as error:
        return problems + ["%s: not JSON (%s)" % (label, error)]
    thread = (document.get("threads") or [{}])[0]
    frames = [f for f in thread.get("frames") or [] if f.get("line") == truth["line"] and f.get("function") == "down"]
    repeated = [f.get("repeated") for f in frames]
    everything = sum(1 + (f.get("repeated") or 0) for f in thread.get("frames") or [])
    if len(repeated) != 3 or repeated[:2] != [None, None] or not repeated[2]:
        problems.append("%s: the recursive frames' \"repeated\" %r, want [None, None, N]" % (label, repeated))
    elif everything != MAX_FRAMES:
        problems.append("%s: %d frames once unfolded, want the walker's %d" % (label, everything, MAX_FRAMES))
    if "too long" not in str(thread.get("error")):
        problems.append("%s: the thread's error %r does not keep \"too long\"" % (label, thread.get("error")))
    return problems


def native_problems(label, out, truth):
    """--native merges the native frames with the Python ones: the recursion folds there too."""
    lines = out.decode("utf-8", "replace").splitlines()
    frame = '(Python) File "%s", line %d, in down' % (truth["file"], truth["line"])
    problems = []
    shown = [line for line in lines if line.endswith(frame)]
    if len(shown) != 3:
        problems.append("%s: the recursive frame shown %d times, want 3" % (label, len(shown)))
    if not any(REPEATED.match(line) for line in lines):
        problems.append("%s: no \"[Previous frame repeated N more times]\" line" % label)
    if not any("in PyEval_EvalCode" in line for line in lines):
        problems.append("%s: the native frames outside the recursion are lost" % label)
    return problems


def main():
    parser = __import__("argparse").ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    if not os.access(PYTHON, os.X_OK):
        results.report("SKIP", "very deep", ["%s is not installed" % PYTHON])
        return results.finish()
    hostile.SANITIZED = hostile.sanitized(args.coreanalyze)
    workdir = tempfile.mkdtemp(prefix="hangpy-deep-")
    coreanalyze = args.coreanalyze
    try:
        truth_path = os.path.join(workdir, "truth.json")
        process = subprocess.Popen([PYTHON, os.path.join(cores.PROGRAMS, "very_deep.py"), truth_path],
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            truth = cores.truth_when_blocked(process, truth_path, 60)
            if truth is None:
                results.report("FAIL", "very deep: the program never blocked")
                return results.finish()
            pid = str(truth["pid"])
            for label, command, check in (("--pid text", [coreanalyze, "--pid", pid], text_problems),
                                          ("--pid --json", [coreanalyze, "--pid", pid, "--json"], json_problems)):
                code, out, err, seconds = hostile.run(hostile.limited(command))
                problems = hostile.output_problems(label, code, out, err, seconds) + check(label, out, truth)
                results.check("very deep: %s (%.1f s)" % (label, seconds), problems)
            core = cores.gcore(truth["pid"], os.path.join(workdir, "core"))
        finally:
            os.killpg(process.pid, 9)
            process.wait()
        for label, command, check in (("core text", [coreanalyze, core], text_problems),
                                      ("core --json", [coreanalyze, core, "--json"], json_problems),
                                      ("core --native", [coreanalyze, core, "--native"], native_problems),
                                      ("triage", [coreanalyze, "triage", core], None)):
            code, out, err, seconds = hostile.run(hostile.limited(command))
            problems = hostile.output_problems(label, code, out, err, seconds)
            if check:
                problems += check(label, out, truth)
            else:
                text = out.decode("utf-8", "replace")
                if "`down` at very_deep.py:%d [repeated " % truth["line"] not in text:
                    problems.append("%s: the recursion is not folded with its count: %r" % (label, out[:600]))
                if not re.search(r"^    \[Previous frame repeated \d+ more times\]$", text, re.M):
                    problems.append("%s: the representative's traceback does not fold" % label)
                if "<Python frames end here: frame chain too long" not in text:
                    problems.append("%s: the walker's note that the chain goes on is lost" % label)
            results.check("very deep: %s (%.1f s)" % (label, seconds), problems)
    except cores.CoreError as error:
        results.report("FAIL", "very deep: %s" % error)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
