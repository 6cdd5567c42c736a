#!/usr/bin/python3
"""gdb test: when gdb lacks the binaries, hangpy's message names gdb's remedies (`file`,
`set sysroot`, `set solib-search-path`), never coreanalyze's options (--exe, --sysroot, ...).

  test_gdb_remedies.py --hangpy-init build/gdbplugin/hangpy.gdb --case snapshot-without-note
  test_gdb_remedies.py --hangpy-init build/gdbplugin/hangpy.gdb --case sysroot \
                       --interpreter pyenv-3.12

Cases:
  snapshot-without-note  a corpus snapshot with its symbol note taken away (the note's owner
                         renamed): a core whose binaries gdb does not have, on any machine.
  sysroot                a gcore of a real interpreter whose libpython is a shared library, opened
                         with an empty sysroot so that gdb cannot find libpython; then, following
                         the message, `set sysroot /` must bring the ground truth's frames.

Exit status: 0 passed, 1 failed, 77 gdb, zstd, the module, the corpus entry or the interpreter is
missing (ctest's SKIP_RETURN_CODE).
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)
import cores  # noqa: E402
import gdb_compare  # noqa: E402
import gdb_session  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402

SKIP = 77
SNAPSHOT = os.path.join(REPO, "tests", "corpus", "pyenv-3.12", "deadlock.core.zst")
SCENARIO = "deadlock"
# symbols/snapshot_note.h
SNAPSHOT_NOTE_NAME = b"HANGPY\0"
SNAPSHOT_NOTE_TYPE = 0x48505901
PT_NOTE = 4
GDB_REMEDIES = ["`file ", "`set sysroot ", "`set solib-search-path "]
COREANALYZE_OPTIONS = ["--exe", "--sysroot", "--lib-path", "--python"]


class Failure(Exception):
    pass


def remove_snapshot_note(path):
    """Renames the owner of the snapshot's symbol note in place, so that nothing reads it."""
    with open(path, "r+b") as core:
        data = bytearray(core.read())
        phoff, = struct.unpack_from("<Q", data, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
        for index in range(phnum):
            header = phoff + index * phentsize
            kind, = struct.unpack_from("<I", data, header)
            if kind != PT_NOTE:
                continue
            offset, = struct.unpack_from("<Q", data, header + 8)
            size, = struct.unpack_from("<Q", data, header + 32)
            at = offset
            while at + 12 <= offset + size:
                namesz, descsz, note_type = struct.unpack_from("<III", data, at)
                name_at = at + 12
                if note_type == SNAPSHOT_NOTE_TYPE and data[name_at:name_at + namesz] == \
                        SNAPSHOT_NOTE_NAME:
                    data[name_at:name_at + 6] = b"NOTHIS"
                    core.seek(0)
                    core.write(data)
                    return
                at = name_at + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
    raise Failure("%s has no snapshot symbol note" % path)


def check_remedy_message(label, lines):
    """Problems with the one error line hangpy printed for a command."""
    text = "\n".join(lines)
    problems = []
    if len(lines) != 1 or not lines[0].startswith("hangpy: no Python interpreter found"):
        problems.append("%s: want one line 'hangpy: no Python interpreter found ...', got: %s"
                        % (label, text))
    for remedy in GDB_REMEDIES:
        if remedy not in text:
            problems.append("%s: does not name gdb's %s...`: %s" % (label, remedy, text))
    for option in COREANALYZE_OPTIONS:
        if option in text:
            problems.append("%s: names coreanalyze's %s: %s" % (label, option, text))
    return problems


def case_snapshot_without_note(options, workdir):
    if not os.path.exists(SNAPSHOT):
        return "SKIP", ["%s is not in the corpus" % os.path.relpath(SNAPSHOT, REPO)]
    core = run_scenarios.decompress(SNAPSHOT, workdir)
    remove_snapshot_note(core)
    commands = [("py-bt", "py-bt"), ("status", "hangpy"), ("py-threads", "py-threads")]
    result = gdb_session.run_gdb(options, ["-c", core], commands)
    problems = []
    for name, _ in commands:
        try:
            problems += check_remedy_message(name, result.output(name))
        except KeyError:
            problems.append("gdb printed no output for %s: %s" % (name, result.text[-2000:]))
    return ("FAIL" if problems else "PASS"), problems


class SysrootOptions(gdb_session.GdbOptions):
    """`options` plus `set sysroot DIR` before gdb opens the files."""

    def __init__(self, options, sysroot):
        super(SysrootOptions, self).__init__(options.hangpy_init, options.libpython,
                                             options.hide_debug_info)
        self.sysroot = sysroot

    def argv(self):
        return super(SysrootOptions, self).argv() + ["-iex", "set sysroot %s" % self.sysroot]


def case_sysroot(options, interpreter_name, workdir):
    interpreter = interpreters.resolve(interpreter_name)
    if interpreter is None:
        return "SKIP", ["interpreter %s is not installed" % interpreter_name]
    if interpreter.root is not None:
        return "SKIP", ["%s runs in a chroot: its sysroot cannot be taken away" % interpreter_name]
    empty_sysroot = os.path.join(workdir, "empty-sysroot")
    os.mkdir(empty_sysroot)
    program = run_scenarios.SCENARIOS[SCENARIO][0]
    with cores.ScenarioProcess(interpreter, program, workdir) as process:
        truth = process.wait_for_ground_truth()
        core = process.take_core("gcore")
        process.kill()
    commands = [
        ("libraries", "info sharedlibrary"),
        ("py-bt missing", "py-bt"),
        ("set sysroot", "set sysroot /"),
        ("py-bt-all", "thread apply all py-bt"),
    ]
    result = gdb_session.run_gdb(SysrootOptions(options, empty_sysroot),
                                 [interpreter.executable, core], commands)
    problems = []
    try:
        libraries = "\n".join(result.output("libraries"))
        if "libpython" not in libraries:
            return "SKIP", ["%s does not load a shared libpython" % interpreter_name]
        problems += check_remedy_message("py-bt without libpython", result.output("py-bt missing"))
        sections = gdb_session.split_threads(result.output("py-bt-all"))
        problems += gdb_compare.compare_thread_sections("py-bt after `set sysroot /`", truth,
                                                        sections, gdb_compare.traceback_frames)
    except KeyError as missing:
        problems.append("gdb printed no output for %s: %s" % (missing, result.text[-3000:]))
    return ("FAIL" if problems else "PASS"), problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hangpy-init", required=True, help="build/gdbplugin/hangpy.gdb")
    parser.add_argument("--case", required=True, choices=["snapshot-without-note", "sysroot"])
    parser.add_argument("--interpreter", default="pyenv-3.12",
                        help="for --case sysroot: an interpreter with a shared libpython")
    args = parser.parse_args()
    problem = gdb_session.environment_problem(args.hangpy_init)
    if problem:
        print("SKIP: %s" % problem)
        return SKIP
    if args.case == "snapshot-without-note" and shutil.which("zstd") is None:
        print("SKIP: zstd is not installed (scripts/install-deps)")
        return SKIP
    options = gdb_session.GdbOptions(hangpy_init=args.hangpy_init)
    workdir = tempfile.mkdtemp(prefix="hangpy-gdb-remedies-")
    try:
        if args.case == "snapshot-without-note":
            status, details = case_snapshot_without_note(options, workdir)
        else:
            status, details = case_sysroot(options, args.interpreter, workdir)
    except (Failure, cores.CoreError, subprocess.TimeoutExpired) as error:
        status, details = "FAIL", [str(error)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("%-4s %s" % (status, args.case))
    for detail in details:
        print("     " + detail)
    return {"PASS": 0, "SKIP": SKIP}.get(status, 1)


if __name__ == "__main__":
    sys.exit(main())
