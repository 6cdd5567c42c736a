#!/usr/bin/python3
"""Truncated cores: everything still readable is printed, each missing piece is named once, and
the exit code says what happened (5 partial: some stacks printed; 8 truncated: none could be).

For each interpreter present, a kernel core and a gcore of the deadlock program are cut at
several points (a copy, cut shorter step by step):

  - gcore: just before its notes (gdb writes them after the memory): all memory is there, but
    the thread list, the file list and the auxv are gone. The modules are recovered from the ELF
    headers in memory, and every thread's stack must equal the ground truth. Then 0.1% short and
    without the main stack (what a full disk or a size limit leaves): the auxiliary vector is gone
    too, the executable is named by a path in the process's data whose file has its build-id, and
    every thread but the main one (before 3.11: every thread) must equal the ground truth.
  - kernel core: without its last segment (the vsyscall page), then from the main thread's
    stack on: the threads whose memory is all there must equal the ground truth (before 3.11
    every thread, since frames are heap objects; from 3.11 the main thread's frame pointer
    lives on its C stack).
  - both: at the runtime (_PyRuntime, or 2.7/3.6's interp_head): no stack can be read, exit 8,
    the truncation named as the cause and the layout never blamed; at 90%, 50%, 10%, and just
    after the kernel core's notes.

At every cut: no crash, an answer in time, the exit code rule above, the truncation named once,
and every printed stack a true part of the ground truth (its innermost frames; all of them when
the thread's chain ended without an error).

Exit status: 0 passed, 1 failed, 77 no interpreter of the list is installed.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import cores  # noqa: E402
import interpreters  # noqa: E402
from results import Results  # noqa: E402

NAMES = ["debian-3.11", "pyenv-2.7", "pyenv-3.6", "pyenv-3.9", "pyenv-3.12", "pyenv-3.13"]
TIMEOUT = 60
EXIT_PARTIAL = 5
EXIT_TRUNCATED = 8
PT_LOAD, PT_NOTE = 1, 4
NT_FILE = 0x46494C45
RUNTIME_SYMBOLS = ("_PyRuntime", "interp_head")


class CoreLayout(object):
    """The program headers and NT_FILE entries of a whole ELF64 core."""

    def __init__(self, path):
        with open(path, "rb") as stream:
            data = stream.read(64)
            phoff, = struct.unpack_from("<Q", data, 0x20)
            phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
            stream.seek(phoff)
            table = stream.read(phentsize * phnum)
            self.loads, self.notes = [], None
            for index in range(phnum):
                p_type, _, offset, vaddr, _, filesz, memsz = struct.unpack_from(
                    "<IIQQQQQ", table, index * phentsize)
                if p_type == PT_LOAD:
                    self.loads.append((offset, vaddr, filesz, memsz))
                elif p_type == PT_NOTE:
                    self.notes = (offset, filesz)
            stream.seek(self.notes[0])
            self.files = parse_nt_file(stream.read(self.notes[1]))
        self.size = os.path.getsize(path)

    def file_offset(self, address):
        for offset, vaddr, filesz, _ in self.loads:
            if vaddr <= address < vaddr + filesz:
                return offset + address - vaddr
        return None

    def last_user_segment(self):
        """The file offset of the highest segment below the kernel's half (the main stack)."""
        return max((vaddr, offset) for offset, vaddr, filesz, _ in self.loads
                   if filesz and vaddr < 1 << 47)[1]

    def last_segment(self):
        return max(offset for offset, _, filesz, _ in self.loads if filesz)


def parse_nt_file(notes):
    """[(start, end, file offset, path)] from the NT_FILE note."""
    at = 0
    while at + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from("<III", notes, at)
        desc = at + 12 + (namesz + 3) // 4 * 4
        if kind == NT_FILE:
            count, unit = struct.unpack_from("<QQ", notes, desc)
            names = notes[desc + 16 + 24 * count:desc + descsz].split(b"\0")
            return [struct.unpack_from("<QQQ", notes, desc + 16 + 24 * i)[:2]
                    + (struct.unpack_from("<Q", notes, desc + 32 + 24 * i)[0] * unit,
                       names[i].decode("utf-8", "replace")) for i in range(count)]
        at = desc + (descsz + 3) // 4 * 4
    return []


def symbol_value(path, name):
    for flags in (["-D"], []):  # the dynamic symbols (stripped files keep them), then .symtab
        out = subprocess.run(["nm", "--defined-only"] + flags + [path], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL).stdout.decode("utf-8", "replace")
        for line in out.splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[2] == name:
                return int(fields[0], 16)
    return None


def first_load_vaddr(path):
    out = subprocess.run(["readelf", "-lW", path], stdout=subprocess.PIPE).stdout.decode()
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD" and int(fields[1], 16) == 0:
            return int(fields[2], 16)
    return 0


def runtime_address(layout):
    """Where the runtime (or 2.7/3.6's interpreter list head) lies in the process, or None."""
    for start, _, offset, path in layout.files:
        base = os.path.basename(path)
        if offset != 0 or not (base.startswith("python") or base.startswith("libpython")):
            continue
        for name in RUNTIME_SYMBOLS:
            value = symbol_value(path, name)
            if value is not None:
                return start - first_load_vaddr(path) + value
    return None


class Run(object):
    def __init__(self, coreanalyze, core, extra=()):
        try:
            result = subprocess.run([coreanalyze, core, "--json"] + list(extra),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.code, self.document, self.stderr = None, None, "no answer in %d s" % TIMEOUT
            return
        self.code = result.returncode
        self.stderr = result.stderr.decode("utf-8", "replace")
        try:
            self.document = json.loads(result.stdout.decode("utf-8", "replace"))
        except ValueError:
            self.document = None

    def threads(self):
        return (self.document or {}).get("threads") or []

    def frame_count(self):
        return sum(len(thread.get("frames") or []) for thread in self.threads())

    def describe(self):
        return "exit %s, stderr %r" % (self.code, self.stderr.strip()[-700:])


def frame_triples(thread):
    return [[frame.get("file"), frame.get("line"), frame.get("function")]
            for frame in thread.get("frames") or []]


def general_problems(run, truth):
    """What must hold at every cut."""
    if run.code is None or run.code < 0 or "Sanitizer" in run.stderr:
        return ["crashed or hung", run.describe()]
    problems = []
    want_code = EXIT_PARTIAL if run.frame_count() else EXIT_TRUNCATED
    if run.code != want_code:
        problems.append("exit %d, want %d (%d frames printed)" % (run.code, want_code,
                                                                 run.frame_count()))
    if run.document is None:
        first = run.stderr.strip().splitlines()[:1]
        if not first or "truncated at" not in first[0]:
            problems.append("a failure must name the truncation first")
        if "layout" in run.stderr:
            problems.append("the layout is blamed for a truncated core")
    else:
        warnings = run.document.get("warnings") or []
        for words in ("truncated at", "the notes are missing"):
            count = sum(words in warning for warning in warnings)
            if count > 1:
                problems.append("%r named %d times" % (words, count))
        if sum("truncated at" in warning for warning in warnings) != 1:
            problems.append("the truncation is not named once in the warnings")
        if "warning: " in run.stderr:
            problems.append("--json run printed warnings on stderr too")
    for thread in run.threads():
        ident = str(thread.get("thread_id"))
        if ident not in truth["threads"]:
            problems.append("thread %s is not in the ground truth" % ident)
            continue
        want, got = truth["threads"][ident]["frames"], frame_triples(thread)
        # The walk goes outwards from the innermost frame and stops where memory is missing.
        expected = want if thread.get("error") is None else want[len(want) - len(got):]
        if got != expected or len(got) > len(want):
            problems.append("thread %s: frames %r are not the ground truth's %r"
                            % (ident, got, want))
    if problems:
        problems.append(run.describe())
    return problems


def whole_stack_problems(run, truth, version, skip_main=False, notes_lost=False):
    """Every thread (but the main one when `skip_main`) must equal the ground truth. With the
    notes cut off (`notes_lost`), a thread's kernel id is certain only where the interpreter
    keeps it itself (3.11 on: the thread state's native_thread_id); before, it comes from the
    notes' registers or glibc's struct pthread, which the cut may have taken: there it is
    checked where reported (compare._compare_thread), not required."""
    found = dict((str(thread.get("thread_id")), thread) for thread in run.threads())
    ids_unknowable = notes_lost and tuple(int(p) for p in version.split(".")[:2]) < (3, 11)
    problems = []
    for ident, truth_thread in sorted(truth["threads"].items()):
        if skip_main and truth_thread["name"] == "MainThread":
            continue
        if ident not in found:
            problems.append("thread %s (%s) missing" % (ident, truth_thread["name"]))
            continue
        if ids_unknowable and found[ident].get("native_thread_id") is None:
            truth_thread = dict(truth_thread, native_id=None)
        problems += compare._compare_thread(ident, truth_thread, found[ident], version)
    return problems


def cuts_for(kind, layout, runtime):
    """(label, size, whole stacks wanted: None, "all" or "all but main") in decreasing size."""
    cuts = []
    if kind == "gcore":
        cuts.append(("just before the notes", layout.notes[0], "all"))
        # A disk that filled up, a size limit: the notes and the end of memory go (gcore writes
        # the notes last, after the main stack, which holds the auxiliary vector and AT_EXECFN):
        # the executable is then named by a path in the process's data, checked by build-id.
        cuts.append(("0.1% short", min(layout.size - layout.size // 1000, layout.notes[0] - 1), "main"))
        cuts.append(("without the main stack", layout.last_user_segment(), "main"))
    else:
        cuts.append(("without the vsyscall page", layout.last_segment(), "all"))
        cuts.append(("from the main stack on", layout.last_user_segment(), "main"))
        cuts.append(("just after the notes", sum(layout.notes), None))
    for percent in (90, 50, 10):
        cuts.append(("at %d%%" % percent, layout.size * percent // 100, None))
    if runtime is not None and layout.file_offset(runtime) is not None:
        cuts.append(("at the runtime", layout.file_offset(runtime) // 8 * 8, "none"))
    return sorted(cuts, key=lambda cut: -cut[1])


def check_core(results, coreanalyze, name, kind, core, truth, workdir):
    label = "%s %s" % (name, kind)
    plain = Run(coreanalyze, core)
    problems = [] if plain.code == 0 else ["the whole core: " + plain.describe()]
    problems += whole_stack_problems(plain, truth, truth["version"])
    results.check("%s: the whole core" % label, problems)
    if problems:
        return
    layout = CoreLayout(core)
    cuts = cuts_for(kind, layout, runtime_address(layout))
    copy = os.path.join(workdir, "cut.core")
    subprocess.run(["cp", "--sparse=always", core, copy], check=True)
    for cut_label, size, whole in cuts:
        os.truncate(copy, size)
        run = Run(coreanalyze, copy)
        problems = general_problems(run, truth)
        old_version = tuple(int(part) for part in truth["version"].split(".")[:2]) < (3, 11)
        notes_lost = bool(layout.notes) and size <= layout.notes[0]
        if whole == "all" or (whole == "main" and old_version):
            problems += whole_stack_problems(run, truth, truth["version"], notes_lost=notes_lost)
        elif whole == "main":
            problems += whole_stack_problems(run, truth, truth["version"], skip_main=True,
                                             notes_lost=notes_lost)
        elif whole == "none" and run.code != EXIT_TRUNCATED:
            problems.append("no stack can be read without the runtime: want exit 8, "
                            + run.describe())
        if kind == "gcore" and whole == "main":
            warnings = (run.document or {}).get("warnings") or []
            if not any("the executable by" in w for w in warnings) or run.frame_count() == 0:
                problems.append("want the executable named although the main stack is gone, and "
                                "frames: %r" % warnings)
        if whole == "all" and kind == "gcore":
            warnings = (run.document or {}).get("warnings") or []
            if not any("the notes are missing" in w and "modules recovered" in w
                       for w in warnings):
                problems.append("want the lost notes and the recovered modules named: %r"
                                % warnings)
        results.check("%s cut %s (%d of %d bytes): exit %s, %d frames"
                      % (label, cut_label, size, layout.size, run.code, run.frame_count()),
                      problems)
    os.unlink(copy)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--interpreters", nargs="*", default=NAMES)
    args = parser.parse_args()
    results = Results()
    kinds = ["gcore"] + ([] if cores.kernel_core_unavailable_reason() else ["kernel"])
    if "kernel" not in kinds:
        results.report("SKIP", "kernel cores", [cores.kernel_core_unavailable_reason()])
    for name, interpreter in interpreters.each_installed(args.interpreters, results):
        for kind in kinds:
            workdir = tempfile.mkdtemp(prefix="hangpy-truncated-")
            try:
                with cores.ScenarioProcess(interpreter, "deadlock.py", workdir,
                                           raise_core_limit=(kind == "kernel")) as process:
                    truth = process.wait_for_ground_truth()
                    core = process.take_core(kind)
                check_core(results, args.coreanalyze, name, kind, core, truth, workdir)
            except cores.CoreError as error:
                results.report("FAIL", "%s %s: %s" % (name, kind, error))
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
