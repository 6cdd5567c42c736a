"""Compare coreanalyze's view of a core with the interpreter's own ground truth.

Every expectation comes from the ground truth file the program wrote before blocking; this module
knows nothing about the scenarios.
"""
import difflib
import re

import compare_asyncio
import compare_diagnosis


def _frame_text(file_name, line, function):
    return "%s:%s %s" % (file_name, line, function)


def _thread_diff(ident, truth_frames, found_frames):
    expected = [_frame_text(*frame) for frame in truth_frames]
    actual = [_frame_text(frame.get("file"), frame.get("line"), frame.get("function"))
              for frame in found_frames]
    lines = difflib.unified_diff(expected, actual, "ground truth (thread %s)" % ident,
                                 "coreanalyze (thread %s)" % ident, lineterm="", n=2)
    return "\n".join("    " + line for line in lines)


def _compare_frames(ident, truth_thread, found_thread):
    problems = []
    truth_frames = truth_thread["frames"]
    found_frames = found_thread.get("frames") or []
    if len(truth_frames) != len(found_frames):
        problems.append("thread %s: %d frames, ground truth has %d"
                        % (ident, len(found_frames), len(truth_frames)))
    for index, (want, got) in enumerate(zip(truth_frames, found_frames)):
        got_triple = [got.get("file"), got.get("line"), got.get("function")]
        if list(want) != got_triple:
            problems.append("thread %s frame %d (outermost is 0): got %s, want %s"
                            % (ident, index, _frame_text(*got_triple), _frame_text(*want)))
            break  # the diff below shows the rest
    if not problems:
        problems += _compare_code_details(ident, truth_thread, found_frames)
    if problems:
        problems.append("frame diff:\n" + _thread_diff(ident, truth_frames, found_frames))
    return problems


def _compare_code_details(ident, truth_thread, found_frames):
    """first_line always; qualname where the interpreter has one (3.11+ code objects); end line
    and columns where traceback's FrameSummary has them (3.11+)."""
    problems = []
    qualnames = truth_thread.get("qualnames")
    positions = truth_thread.get("positions")
    for index, got in enumerate(found_frames):
        if positions is not None:
            want = positions[index][1:]
            found = [got.get("end_line"), got.get("column"), got.get("end_column")]
            if found != want:
                problems.append("thread %s frame %d: end_line, column, end_column %r, want %r"
                                % (ident, index, found, want))
        want_first = truth_thread["first_lines"][index]
        if got.get("first_line") != want_first:
            problems.append("thread %s frame %d: first_line %s, want %s"
                            % (ident, index, got.get("first_line"), want_first))
        if qualnames is not None and got.get("qualname") != qualnames[index]:
            problems.append("thread %s frame %d: qualname %r, want %r"
                            % (ident, index, got.get("qualname"), qualnames[index]))
    return problems


def _every_frame_is_an_eval_call(version):
    """Before 3.11 each Python call recursed into the eval loop (3.11 inlined them, bpo-45256)."""
    major, minor = (int(part) for part in version.split(".")[:2])
    return (major, minor) < (3, 11)


def _compare_entry_flags(ident, version, found_frames):
    """is_entry: every frame before 3.11; on every version the outermost frame, which C called."""
    problems = []
    every_frame = _every_frame_is_an_eval_call(version)
    for index, got in enumerate(found_frames):
        if (every_frame or index == 0) and got.get("is_entry") is not True:
            problems.append("thread %s frame %d (outermost is 0): is_entry %r, want true on %s"
                            % (ident, index, got.get("is_entry"), version))
            break
    return problems


def _compare_thread(ident, truth_thread, found_thread, version):
    problems = []
    if found_thread.get("error") is not None:
        problems.append("thread %s: error %r" % (ident, found_thread["error"]))
    # Where the interpreter knew a thread's kernel id and name, coreanalyze must report them.
    for truth_key, found_key in (("native_id", "native_thread_id"), ("name", "name")):
        want, got = truth_thread.get(truth_key), found_thread.get(found_key)
        if want is not None and want != got:
            problems.append("thread %s: %s %r, want %r" % (ident, found_key, got, want))
    problems += _compare_frames(ident, truth_thread, found_thread)
    return problems + _compare_entry_flags(ident, version, found_thread.get("frames") or [])


def _compare_threads_without_python(truth, report):
    """The OS threads the interpreter did not list as Python threads (the reporter aside, which
    has ended by the time the core is taken) are the ones coreanalyze lists as running none."""
    natives = [thread.get("native_id") for thread in truth["threads"].values()]
    if "os_threads" not in truth or None in natives or truth.get("reporter_native_id") is None:
        return []  # an older ground truth, or a thread whose kernel id the interpreter hid
    want = sorted(set(truth["os_threads"]) - set(natives) - set([truth["reporter_native_id"]]))
    found = report.get("threads_without_python")
    got = sorted(thread["native_thread_id"] for thread in found) if found is not None else None
    if got != want:
        return ["threads_without_python %r, want LWPs %r" % (got, want)]
    return []


def _compare_process_facts(truth, process):
    """Parent, owner and whether the interpreter was finalizing, where the ground truth says."""
    problems = []
    for truth_key, found_key in (("ppid", "parent_pid"), ("uid", "uid"), ("gid", "gid")):
        if truth_key in truth and process.get(found_key) != truth[truth_key]:
            problems.append("process.%s %r, want %r"
                            % (found_key, process.get(found_key), truth[truth_key]))
    got = process.get("finalizing")
    if "finalizing" in truth:
        # 2.7 keeps no record of finalizing: there coreanalyze must say it cannot tell (null).
        cannot_tell = truth["version"].startswith("2.")
        want = None if cannot_tell else truth["finalizing"]
        if got != want:
            problems.append("process.finalizing %r, want %r" % (got, want))
    elif got is True:  # an older ground truth: its programs block while running, not at exit
        problems.append("process.finalizing is true; the program was not shutting down")
    return problems


# What a ground truth written by today's programs holds; an older one lacks some, and the corpus
# says so for each such entry (corpus_manifest: "legacy_truth") instead of letting the check that
# needs it pass unseen.
COMPLETE_TRUTH_KEYS = ("os_threads", "reporter_native_id", "ppid", "uid", "gid")


def missing_truth(truth, records_waits):
    """The facts `truth` lacks that the comparisons need to be whole: the process facts, every
    thread's kernel id and name, and (`records_waits`: the program records them) its waits."""
    missing = [key for key in COMPLETE_TRUTH_KEYS if key not in truth]
    if truth.get("finalizing"):  # written in __del__, where no reporter thread exists
        missing = [key for key in missing if key not in ("os_threads", "reporter_native_id")]
    for ident, thread in sorted(truth["threads"].items()):
        # null is a fact the interpreter gave (a thread threading does not list has no name);
        # only a key the program did not write is missing.
        for key in ("native_id", "name"):
            if key not in thread:
                missing.append("threads.%s.%s" % (ident, key))
    if records_waits and "waits" not in truth:
        missing.append("waits")
    return missing


def compare_signal(report, expected):
    """Problems with process.signal_info against `expected` (keys of signal_info to check)."""
    found = (report.get("process") or {}).get("signal_info") or {}
    return ["process.signal_info.%s %r, want %r" % (key, found.get(key), want)
            for key, want in sorted(expected.items()) if found.get(key) != want]


def unfold_frames(frames):
    """A thread's JSON frames with recursion unfolded: a frame with "repeated": N stands for
    itself and N more identical frames (report/repeated_frames.h), as the ground truth lists them."""
    unfolded = []
    for frame in frames:
        unfolded.append(frame)
        unfolded.extend([frame] * int(frame.get("repeated") or 0))
    return unfolded


_REPEATED = re.compile(r"^  \[Previous frame repeated (\d+) more times?\]$")


def unfold_text(lines):
    """Text lines with each "[Previous frame repeated N more times]" line replaced by N copies of
    the frame before it (its File line and the lines under it)."""
    out = []
    frame_start = None  # index in `out` of the last frame's File line
    for line in lines:
        match = _REPEATED.match(line)
        if match and frame_start is not None:
            block = out[frame_start:]
            for _ in range(int(match.group(1))):
                out.extend(block)
            continue
        if line.startswith("  File "):
            frame_start = len(out)
        elif not line.startswith("  "):
            frame_start = None  # a thread's header, a blank line: no frame before
        out.append(line)
    return out


def compare_json(truth, report):
    """List of problems (one string each, possibly with an indented diff); empty when equal."""
    problems = []
    report = dict(report)
    report["threads"] = [dict(thread, frames=unfold_frames(thread.get("frames") or []))
                         for thread in report.get("threads") or []]
    process = report.get("process") or {}
    if process.get("pid") != truth["pid"]:
        problems.append("process.pid %r, want %r" % (process.get("pid"), truth["pid"]))
    version = process.get("python_version") or ""
    if not version.startswith(truth["version"]):
        problems.append("process.python_version %r, want %r" % (version, truth["version"]))
    found = {}
    for thread in report.get("threads") or []:
        found[str(thread.get("thread_id"))] = thread
    for ident in sorted(set(truth["threads"]) - set(found)):
        problems.append("thread %s (%s) missing from coreanalyze's output"
                        % (ident, truth["threads"][ident]["name"]))
    for ident in sorted(set(found) - set(truth["threads"])):
        problems.append("thread %s reported by coreanalyze is not in the ground truth" % ident)
    for ident in sorted(set(truth["threads"]) & set(found)):
        problems += _compare_thread(ident, truth["threads"][ident], found[ident], truth["version"])
    problems += _compare_threads_without_python(truth, report)
    problems += _compare_process_facts(truth, process)
    if "asyncio" in truth:  # the program's own view of its asyncio tasks
        problems += compare_asyncio.compare(truth["asyncio"], report)
    problems += compare_diagnosis.compare(truth, report)
    return problems


_HEADER = re.compile(r"^Thread 0x([0-9a-f]+)\b")


def _thread_blocks(lines):
    """{thread id: (its header line, the lines under it up to the next header)}."""
    blocks = {}
    current = None
    for line in lines:
        match = _HEADER.match(line)
        if match:
            current = int(match.group(1), 16)
            blocks[current] = (line, [])
        elif current is not None:
            blocks[current][1].append(line)
    return blocks


def _header_problems(ident, thread, header):
    problems = []
    if thread.get("native_id") is not None and "(LWP %d)" % thread["native_id"] not in header:
        problems.append("text output: thread %s header %r lacks (LWP %d)"
                        % (ident, header, thread["native_id"]))
    if thread.get("name") is not None and ' "%s"' % thread["name"] not in header:
        problems.append("text output: thread %s header %r lacks its name %r"
                        % (ident, header, thread["name"]))
    return problems


def compare_text(truth, text, read_lines=None):
    """Problems with the text output: each thread of the ground truth has its block under a
    `Thread 0x<ident> (LWP n) "name"` header, and in that block each of its frames is a whole
    `  File "f", line N, in <qualname>` line, outermost first (the traceback order); where
    `read_lines(file)` gives the frame's source file, the line after it is that source line,
    stripped, as Python's tracebacks print it."""
    problems = []
    blocks = _thread_blocks(unfold_text(text.splitlines()))
    for ident, thread in sorted(truth["threads"].items()):
        if int(ident) not in blocks:
            problems.append("text output: no header for thread %s (%s)" % (ident, thread.get("name")))
            continue
        header, lines = blocks[int(ident)]
        problems += _header_problems(ident, thread, header)
        names = thread.get("qualnames") or [frame[2] for frame in thread["frames"]]
        position = 0
        for (file_name, line, _), name in zip(thread["frames"], names):
            wanted = '  File "%s", line %d, in %s' % (file_name, line, name)
            while position < len(lines) and lines[position] != wanted:
                position += 1
            if position == len(lines):
                problems.append("text output: thread %s: no line %r after the previous frame"
                                % (ident, wanted))
                break
            position += 1
            source = read_lines(file_name) if read_lines else None
            if source is not None and 1 <= line <= len(source) and source[line - 1].strip():
                want_source = "    " + source[line - 1].strip()
                got = lines[position] if position < len(lines) else None
                if got != want_source:
                    problems.append("text output: thread %s %s line %d: source line %r, want %r"
                                    % (ident, name, line, got, want_source))
    problems += compare_diagnosis.compare_text(truth, blocks, text)
    if "asyncio" in truth:
        problems += ["asyncio text: %s" % problem
                     for problem in compare_asyncio.check_text(truth["asyncio"], text)]
    return problems


def source_lines(path):
    """A file's lines as coreanalyze reads them (split at \\n, a trailing \\r dropped), or None."""
    try:
        with open(path, "rb") as source:
            data = source.read()
    except (IOError, OSError):
        return None
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def compare_context(report, read_lines, count):
    """--json --context COUNT: each frame's "context" is its file's lines COUNT before and after
    its line, the frame's own marked current; null exactly where the source cannot be read.
    `read_lines(file)` gives the file's lines as the analysing machine sees them, or None."""
    problems = []
    checked = 0
    for thread in report.get("threads") or []:
        for index, frame in enumerate(thread.get("frames") or []):
            lines = read_lines(frame.get("file"))
            line = frame.get("line")
            got = frame.get("context")
            if lines is None or line is None or not 1 <= line <= len(lines):
                if got is not None:
                    problems.append("thread %s frame %d: context %r for an unreadable line"
                                    % (thread.get("thread_id"), index, got))
                continue
            first, last = max(1, line - count), min(len(lines), line + count)
            want = [{"line": n, "text": lines[n - 1], "current": n == line}
                    for n in range(first, last + 1)]
            if got != want:
                problems.append("thread %s frame %d: context %r, want %r"
                                % (thread.get("thread_id"), index, got, want))
            checked += 1
    if not checked:
        problems.append("--context: no frame had a readable source line")
    return problems


def _characters(text, byte_count):
    """Characters in the first `byte_count` UTF-8 bytes of `text`."""
    return len(text.encode("utf-8")[:byte_count].decode("utf-8", "replace"))


def compare_carets(truth, text, read_lines):
    """The caret line under each source line marks exactly the ground truth's columns (3.11+):
    from column to end column, or to the end of the line when the expression goes on to later
    lines; none when the expression is the whole line, as Python's tracebacks draw them."""
    problems = []
    lines = text.splitlines()
    for ident, thread in sorted(truth["threads"].items()):
        positions = thread.get("positions")
        if positions is None:
            continue
        position_in_text = 0
        for (file_name, line, function), (_, end_line, column, end_column) in zip(
                thread["frames"], positions):
            wanted = 'File "%s", line %d, in ' % (file_name, line)
            while position_in_text < len(lines) and wanted not in lines[position_in_text]:
                position_in_text += 1
            if position_in_text + 1 >= len(lines):
                break  # compare_text reports missing frames
            source = read_lines(file_name)
            if source is None or column is None or end_column is None or line > len(source):
                continue
            raw = source[line - 1].rstrip()
            indent = len(raw) - len(raw.lstrip())
            end_byte = end_column if end_line == line else len(raw.encode("utf-8"))
            start, end = _characters(raw, column), min(_characters(raw, end_byte), len(raw))
            after = lines[position_in_text + 2] if position_in_text + 2 < len(lines) else ""
            has_carets = after.strip() != "" and set(after.strip()) == set("^")
            whole_line = start <= indent and end >= len(raw)
            if whole_line or start >= end:
                if has_carets:
                    problems.append("thread %s %s line %d: carets %r under a whole line"
                                    % (ident, function, line, after))
                continue
            want = "    " + " " * (start - indent) + "^" * (end - start)
            if after != want:
                problems.append("thread %s %s line %d: caret line %r, want %r (columns %s-%s)"
                                % (ident, function, line, after, want, column, end_column))
    return problems
