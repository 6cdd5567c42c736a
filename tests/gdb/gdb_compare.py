"""Compare hangpy's gdb output with the interpreter's ground truth (tests/programs/groundtruth.py).

Every expectation comes from the ground truth document; nothing here knows the scenarios.
"""
import re

FILE_LINE = re.compile(r'^  File "(.*)", line (\d+|\?), in (.*)$')
# A Python frame in `bt`: "#13 name [Python] () at FILE:LINE" or, elided, "    name [Python] ...".
BT_PYTHON_FRAME = re.compile(r"^(?:#\d+\s+|\s+)(.*) \[Python\] \(\) at (.*):(\d+)$")


def truth_names(truth_thread, qualified):
    """The function names hangpy prints, innermost first: co_name in py-bt (as libpython.py),
    co_qualname where the version has it in `bt`."""
    names = [frame[2] for frame in truth_thread["frames"]]
    if qualified:
        names = truth_thread.get("qualnames") or names
    return list(reversed(names))


def truth_frames(truth_thread, qualified=False):
    """[(file, line, name)] innermost first."""
    frames = list(reversed(truth_thread["frames"]))
    names = truth_names(truth_thread, qualified)
    return [(frame[0], frame[1], name) for frame, name in zip(frames, names)]


def traceback_frames(lines):
    """py-bt output -> [(file, line, name)] in printed order (most recent call first)."""
    frames = []
    for line in lines:
        match = FILE_LINE.match(line)
        if match:
            number = int(match.group(2)) if match.group(2) != "?" else None
            frames.append((match.group(1), number, match.group(3)))
    return frames


def bt_python_frames(lines):
    """`bt` output with the frame filter -> [(file, line, name)] innermost first."""
    frames = []
    for line in lines:
        match = BT_PYTHON_FRAME.match(line)
        if match:
            frames.append((match.group(2), int(match.group(3)), match.group(1)))
    return frames


def diff_frames(label, want, got):
    if want == got:
        return []
    problems = ["%s: %d frames, ground truth has %d" % (label, len(got), len(want))]
    for index, (expected, actual) in enumerate(zip(want, got)):
        if expected != actual:
            problems.append("%s: frame %d (innermost is 0): got %s, want %s"
                            % (label, index, actual, expected))
            break
    return problems


def truth_by_lwp(truth):
    """{lwp: truth thread}; threads without a native id (not 3.8+) are left out."""
    return dict((thread["native_id"], thread) for thread in truth["threads"].values()
                if thread.get("native_id") is not None)


def compare_thread_sections(label, truth, sections, extract, qualified=False):
    """Problems comparing `thread apply all` sections {lwp: lines} with the ground truth;
    `qualified`: the output names frames by co_qualname (`bt`), not co_name (py-bt)."""
    problems = []
    by_lwp = truth_by_lwp(truth)
    if len(by_lwp) != len(truth["threads"]):
        return ["%s: the ground truth has threads without native ids" % label]
    for lwp, thread in sorted(by_lwp.items()):
        if lwp not in sections:
            problems.append("%s: no output for thread LWP %d" % (label, lwp))
            continue
        problems += diff_frames("%s LWP %d" % (label, lwp), truth_frames(thread, qualified),
                                extract(sections[lwp]))
    return problems
