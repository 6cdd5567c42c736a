#!/usr/bin/python3
"""coreanalyze with one kind of damage done to its output, for the tests' self-test
(test_self_damage.py): a test that still passes against it cannot see that damage.

  damaged_coreanalyze.py DAMAGE REAL_COREANALYZE [coreanalyze arguments...]

DAMAGE is one of DAMAGES below. The real coreanalyze runs with the arguments given; its exit
status and standard error pass through, its standard output (JSON or text) is damaged, and so is
the page `--html FILE` wrote.
"""
import json
import os
import re
import subprocess
import sys

HEADER = re.compile(r'^(Thread 0x[0-9a-f]+)( \(LWP \d+\))?( "[^"]*")?')


def _threads(document):
    """Every thread object of a coreanalyze JSON document (a process, or triage's processes)."""
    found = list(document.get("threads") or [])
    for process in document.get("processes") or []:
        found += _threads(process)
    return found


def names_json(document):
    for thread in _threads(document):
        thread.pop("name", None)
        thread.pop("native_thread_id", None)
    return document


def names_text(text):
    return "\n".join(HEADER.sub(lambda m: m.group(1), line) for line in text.split("\n"))


def functions_json(document):
    for thread in _threads(document):
        for frame in thread.get("frames") or []:
            for key in ("function", "qualname"):
                if key in frame:
                    frame[key] = "WRONG"
    return document


def functions_text(text):
    return re.sub(r'(  File ".*", line \S+, in ).*', r"\1WRONG", text)


def diagnosis_json(document):
    for thread in _threads(document):
        thread["blocked_on"] = None
        (thread.get("state") or {})["held_locks"] = []
    document["deadlocks"] = []
    return document


def diagnosis_text(text):
    return "\n".join(line for line in text.split("\n")
                     if not line.lstrip().startswith(("Blocked on", "deadlock:", "Holds")))


def layout_text(text):
    """Thread headers and source lines gone, only the `File` lines left of each traceback."""
    kept = []
    for line in text.split("\n"):
        if HEADER.match(line):
            continue
        if line.startswith("    ") and kept and kept[-1].startswith("  File "):
            continue
        kept.append(line)
    return "\n".join(kept)


def sources_text(text):
    """Only the source lines under the `File` lines gone (and their caret lines)."""
    kept = []
    for line in text.split("\n"):
        if line.startswith("    ") and kept and (kept[-1] is None or kept[-1].startswith("  File ")):
            kept.append(None)
            continue
        kept.append(line)
    return "\n".join(line for line in kept if line is not None)


def nothing(_):
    return None


def same(document):
    return document


# name -> (what it does to JSON, what it does to text); None: the output is dropped.
DAMAGES = {
    "names": (names_json, names_text),
    "functions": (functions_json, functions_text),
    "diagnosis": (diagnosis_json, diagnosis_text),
    "layout": (same, layout_text),
    "stdout": (nothing, nothing),
    # The same damages to the text alone: the text check must see them by itself.
    "text-names": (same, names_text),
    "text-functions": (same, functions_text),
    "text-diagnosis": (same, diagnosis_text),
    "text-sources": (same, sources_text),
    # Output intact, but a layout that does not fit exits 1 instead of its own code (6).
    "exit-code": (same, lambda text: text),
}


def damage(kind, output):
    as_json, as_text = DAMAGES[kind]
    text = output.decode("utf-8", "replace")
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict):
        damaged = as_json(document)
        return b"" if damaged is None else json.dumps(damaged).encode("utf-8")
    damaged = as_text(text)
    return b"" if damaged is None else damaged.encode("utf-8")


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in DAMAGES:
        sys.stderr.write("usage: damaged_coreanalyze.py {%s} COREANALYZE [ARGS...]\n"
                         % ",".join(sorted(DAMAGES)))
        return 2
    kind, real, arguments = sys.argv[1], sys.argv[2], sys.argv[3:]
    result = subprocess.run([real] + arguments, stdout=subprocess.PIPE)
    sys.stdout.buffer.write(damage(kind, result.stdout))
    if "--html" in arguments[:-1]:
        page = arguments[arguments.index("--html") + 1]
        if os.path.exists(page) and kind == "stdout":
            os.remove(page)
        elif os.path.exists(page) and kind in ("names", "functions"):
            with open(page, "rb") as stream:
                html = stream.read().decode("utf-8", "replace")
            html = re.sub(r'"name": ?"[^"]*"', '"name": ""', html) if kind == "names" else \
                re.sub(r'"function": ?"[^"]*"', '"function": "WRONG"', html)
            with open(page, "wb") as stream:
                stream.write(html.encode("utf-8"))
    if kind == "exit-code" and result.returncode == 6:
        return 1
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
