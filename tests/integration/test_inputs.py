#!/usr/bin/python3
"""coreanalyze on every form a core reaches users in: the same stacks as the plain core.

  test_inputs.py --coreanalyze build/bin/coreanalyze

One real core of the deadlock program per interpreter (Debian's /usr/bin/python3.11, and pyenv
3.12), turned inside the test into: zstd, lz4 and xz files (the tools systemd-coredump's formats
come from), a gzip file, a zstd pipe on standard input, an ABRT problem directory (coredump,
executable, cmdline, maps, environ, pid, time, ... as abrt-hook-ccpp writes them) and an apport
.crash file (fields, then "CoreDump: base64" and space-indented base64 lines of gzip data, each
line encoded on its own, as problem_report.py writes them; and the older zlib form). Each must
give the same threads and frames (--json) as the plain core. Broken forms (corrupt zstd, cut xz
and zstd, base64 garbage, an ABRT directory without its coredump, a report without CoreDump)
must give one line and their exit code, never a crash. A core whose NT_FILE note is renamed away
reads through the ELF headers in its memory on its own, and through the saved maps (ABRT `maps`,
apport ProcMaps) when its wrapper kept them. --coredumpctl runs against a
stand-in coredumpctl on PATH where systemd's is not installed.
"""
import argparse
import base64
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
from blocked_program import BlockedProgram, NeverBlocked  # noqa: E402
from results import Results  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INTERPRETERS = ("debian-3.11", "pyenv-3.12")
TIMEOUT = 120
EXIT_BAD_INPUT = 3
EXIT_PARTIAL = 5
EXIT_TRUNCATED = 8
APPORT_BLOCK = 1024 * 1024  # problem_report.py compresses in blocks of 1 MB


class Run(object):
    def __init__(self, argv, stdin=subprocess.DEVNULL, env=None):
        started = time.time()
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=stdin, timeout=TIMEOUT, env=env)
        self.seconds = time.time() - started
        self.code = result.returncode
        self.stdout = result.stdout.decode("utf-8", "replace")
        self.stderr_lines = result.stderr.decode("utf-8", "replace").strip().splitlines()

    def describe(self):
        return "exit %d, stderr %r" % (self.code, "\n".join(self.stderr_lines)[:600])


def stacks_of(run):
    """The threads with their frames from --json output, or None."""
    try:
        document = json.loads(run.stdout)
    except ValueError:
        return None
    return document.get("threads")


def warnings_of(run):
    try:
        return json.loads(run.stdout).get("warnings")
    except ValueError:
        return None


def same_stacks(run, expected, expected_warnings=None):
    """Problems: not exit 0, other threads or frames than `expected`, other warnings."""
    if run.code != 0:
        return ["want exit 0", run.describe()]
    if expected_warnings is not None and warnings_of(run) != expected_warnings:
        return ["want the plain core's warnings %r, got %r" % (expected_warnings, warnings_of(run))]
    got = stacks_of(run)
    if got != expected:
        return ["stacks differ from the plain core's",
                "got %s" % json.dumps(got)[:800], "want %s" % json.dumps(expected)[:800]]
    return []


def one_line(run, codes, words):
    problems = []
    if run.code not in codes:
        problems.append("want exit %s" % " or ".join(str(code) for code in codes))
    if len(run.stderr_lines) != 1:
        problems.append("want exactly one line on stderr")
    elif words not in run.stderr_lines[0]:
        problems.append("want %r in the message" % words)
    if problems:
        problems.append(run.describe())
    return problems


def take_core(interpreter, workdir):
    """A core of the deadlock program, and what /proc said of the process before it."""
    kind = "gcore" if cores.kernel_core_unavailable_reason() else "kernel"
    with cores.ScenarioProcess(interpreter, "deadlock.py", workdir,
                               raise_core_limit=(kind == "kernel")) as process:
        process.wait_for_ground_truth()
        proc = {}
        for item in ("maps", "cmdline", "environ"):
            with open("/proc/%d/%s" % (process.pid, item), "rb") as stream:
                proc[item] = stream.read()
        proc["pid"] = process.pid
        proc["executable"] = os.readlink("/proc/%d/exe" % process.pid)
        return process.take_core(kind), proc


def compress(tool, args, core, path):
    with open(core, "rb") as source, open(path, "wb") as target:
        subprocess.run([tool] + args, stdin=source, stdout=target, check=True, timeout=TIMEOUT)
    return path


def make_abrt_directory(core, proc, path, with_coredump=True):
    """The files abrt-hook-ccpp writes into /var/spool/abrt/ccpp-DATE-PID."""
    os.mkdir(path)
    if with_coredump:
        subprocess.run(["cp", "--sparse=always", core, os.path.join(path, "coredump")], check=True)
    items = {
        "analyzer": "abrt-ccpp", "type": "CCpp", "pid": str(proc["pid"]),
        "executable": proc["executable"],
        "cmdline": proc["cmdline"].replace(b"\0", b" ").decode().strip(),
        "time": str(int(time.time())), "uid": str(os.getuid()), "reason": "killed by SIGABRT",
        "maps": proc["maps"].decode(), "environ": proc["environ"].replace(b"\0", b"\n").decode(),
    }
    for name, text in items.items():
        with open(os.path.join(path, name), "w") as stream:
            stream.write(text)
    return path


def indented(text):
    return "\n".join(" " + line for line in text.rstrip("\n").split("\n"))


APPORT_ENVIRON = "LANG=C.UTF-8\nPATH=(custom, no user)\nSHELL=/bin/bash"


def write_apport_report(core, proc, path, legacy_zlib=False, garbage=False, with_core=True,
                        proc_environ=APPORT_ENVIRON):
    """An apport .crash file: text fields, then CoreDump as problem_report.py encodes it."""
    with open(path, "wb") as out:
        fields = [
            ("ProblemType", "Crash"), ("Date", time.asctime()),
            ("ExecutablePath", proc["executable"]),
            ("ProcCmdline", proc["cmdline"].replace(b"\0", b" ").decode().strip()),
            ("ProcEnviron", proc_environ),
            ("ProcMaps", proc["maps"].decode()), ("Signal", "6"),
        ]
        for name, value in fields:
            if "\n" in value:
                out.write(("%s:\n%s\n" % (name, indented(value))).encode())
            else:
                out.write(("%s: %s\n" % (name, value)).encode())
        if not with_core:
            return path
        out.write(b"CoreDump: base64\n")
        if legacy_zlib:
            compressor = zlib.compressobj()
        else:
            # The gzip header apport writes by hand, then raw deflate blocks.
            out.write(b" " + base64.b64encode(b"\037\213\010\010\000\000\000\000\002\377CoreDump\000")
                      + b"\n")
            compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS, zlib.DEF_MEM_LEVEL, 0)
        crc = zlib.crc32(b"")
        size = 0
        with open(core, "rb") as source:
            while True:
                block = source.read(APPORT_BLOCK)
                if not block:
                    break
                crc = zlib.crc32(block, crc)
                size += len(block)
                compressed = compressor.compress(block)
                if compressed:
                    out.write(b" " + base64.b64encode(compressed) + b"\n")
                if garbage and size > 4 * APPORT_BLOCK:
                    out.write(b" this is *not* base64!\n")
                    garbage = False
        tail = compressor.flush()
        if not legacy_zlib:
            tail += struct.pack("<LL", crc & 0xFFFFFFFF, size & 0xFFFFFFFF)
        out.write(b" " + base64.b64encode(tail) + b"\n")
    return path


NT_FILE = 0x46494C45
PT_NOTE = 4


def without_file_note(core, target):
    """A copy of `core` whose NT_FILE note is renamed to a type no reader knows: a core that
    lists no mapped files, as some dumpers write them."""
    subprocess.run(["cp", "--sparse=always", core, target], check=True)
    renamed = 0
    with open(target, "r+b") as stream:
        header = stream.read(64)
        phoff, = struct.unpack_from("<Q", header, 32)
        phentsize, phnum = struct.unpack_from("<HH", header, 54)
        for index in range(phnum):
            stream.seek(phoff + index * phentsize)
            p_type, _, p_offset, _, _, p_filesz = struct.unpack("<IIQQQQ", stream.read(40))
            if p_type != PT_NOTE:
                continue
            stream.seek(p_offset)
            notes = stream.read(p_filesz)
            at = 0
            while at + 12 <= len(notes):
                namesz, descsz, note_type = struct.unpack_from("<III", notes, at)
                if note_type == NT_FILE:
                    stream.seek(p_offset + at + 8)
                    stream.write(struct.pack("<I", NT_FILE ^ 0xFF))
                    renamed += 1
                at += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    if renamed != 1:
        raise cores.CoreError("found %d NT_FILE notes in %s, want 1" % (renamed, core))
    return target


FAKE_COREDUMPCTL = """#!/bin/sh
# Stands in for systemd's coredumpctl where it is not installed: what `coredumpctl dump MATCH
# --output=FILE` does with the one core it knows (pid %(pid)d), and its error for any other.
match="" output=""
for argument in "$@"; do
  case "$argument" in
    --output=*) output="${argument#--output=}" ;;
    dump|--no-pager|-q) ;;
    -*) echo "coredumpctl: unknown option $argument" >&2; exit 1 ;;
    *) match="$argument" ;;
  esac
done
if [ "$match" != "%(pid)d" ]; then echo "No coredumps found." >&2; exit 1; fi
cp --sparse=always "%(core)s" "$output"
"""


def check_coredumpctl(coreanalyze, label, core, proc, expected, workdir, results):
    """--coredumpctl against a stand-in on PATH when the real one is absent (the arguments it is
    given, the core it writes, its failure), against the real one when present (a failure for
    a PID no core exists for)."""
    env = dict(os.environ)
    if not shutil.which("coredumpctl"):
        run = Run([coreanalyze, "--coredumpctl", str(proc["pid"])])
        results.check("%s: --coredumpctl without coredumpctl" % label,
                      one_line(run, (EXIT_BAD_INPUT,), "coredumpctl is not installed"))
        bin_dir = os.path.join(workdir, "fake-bin")
        os.mkdir(bin_dir)
        fake = os.path.join(bin_dir, "coredumpctl")
        with open(fake, "w") as stream:
            stream.write(FAKE_COREDUMPCTL % {"pid": proc["pid"], "core": core})
        os.chmod(fake, 0o755)
        env["PATH"] = bin_dir + ":" + env.get("PATH", "/usr/bin:/bin")
        run = Run([coreanalyze, "--coredumpctl", str(proc["pid"]), "--json"], env=env)
        results.check("%s: --coredumpctl PID (stand-in coredumpctl)" % label,
                      same_stacks(run, expected))
    run = Run([coreanalyze, "--coredumpctl", "999999999"], env=env)
    results.check("%s: --coredumpctl of a PID without a core" % label,
                  one_line(run, (EXIT_BAD_INPUT,), "coredumpctl dump failed"))


def cut(path, fraction, target):
    with open(path, "rb") as source, open(target, "wb") as out:
        out.write(source.read(int(os.path.getsize(path) * fraction)))
    return target


def corrupt(path, target):
    """A copy with 4 KB of garbage in the middle of the compressed data."""
    shutil.copyfile(path, target)
    with open(target, "r+b") as stream:
        stream.seek(os.path.getsize(target) // 2)
        stream.write(os.urandom(4096))
    return target


def check_interpreter(coreanalyze, label, interpreter, results):
    workdir = tempfile.mkdtemp(prefix="hangpy-inputs-")
    try:
        core, proc = take_core(interpreter, workdir)
        plain = Run([coreanalyze, core, "--json"])
        expected = stacks_of(plain)
        if plain.code != 0 or not expected:
            results.check("%s: plain core" % label, ["want exit 0 and threads", plain.describe()])
            return
        results.check("%s: plain core (%d threads)" % (label, len(expected)), [])
        w = lambda name: os.path.join(workdir, name)  # noqa: E731
        forms = [
            ("zstd", compress("zstd", ["-q", "-c", "-T0"], core, w("core.zst"))),
            # A 2 GiB window (what `zstd --long=31` writes, from a pipe): libzstd's default limit
            # is 128 MiB, and such a core was once refused as "too much memory for decoding".
            ("zstd --long=31", compress("zstd", ["-q", "-c", "--long=31"], core, w("long.zst"))),
            ("lz4", compress("lz4", ["-q", "-c"], core, w("core.lz4"))),
            ("xz", compress("xz", ["-c", "-0", "-T0"], core, w("core.xz"))),
            ("gzip", compress("gzip", ["-c", "-1"], core, w("core.gz"))),
            ("ABRT directory", make_abrt_directory(core, proc, w("ccpp-2026-11-23-1"))),
            ("ABRT directory, zstd coredump", make_abrt_directory(w("core.zst"), proc, w("ccpp-z"))),
            ("apport .crash", write_apport_report(core, proc, w("_usr_bin_python.crash"))),
            ("apport .crash, legacy zlib", write_apport_report(core, proc, w("old.crash"),
                                                                legacy_zlib=True)),
        ]
        for name, path in forms:
            run = Run([coreanalyze, path, "--json"])
            results.check("%s: %s (%.1f s)" % (label, name, run.seconds),
                          same_stacks(run, expected, warnings_of(plain)))
        with open(w("core.zst"), "rb") as pipe_source:
            pipe = subprocess.Popen(["cat"], stdin=pipe_source, stdout=subprocess.PIPE)
            run = Run([coreanalyze, "-", "--json"], stdin=pipe.stdout)
            pipe.stdout.close()
            pipe.wait()
        results.check("%s: zstd through a pipe" % label,
                      same_stacks(run, expected, warnings_of(plain)))

        # The executable the wrapper recorded finds the interpreter where the core's own path,
        # under a sysroot without it, finds nothing (Debian's static python3.11 needs nothing else).
        if label == "debian-3.11":
            empty = w("empty-sysroot")
            os.mkdir(empty)
            for name, path in (("ABRT", w("ccpp-2026-11-23-1")), ("apport", w("_usr_bin_python.crash"))):
                run = Run([coreanalyze, path, "--json", "--sysroot", empty])
                results.check("%s: %s executable item stands in for a missing executable"
                              % (label, name), same_stacks(run, expected))

        # A core without its list of mapped files: on its own, the modules are recovered from the
        # ELF headers in its memory (module_recovery.h); the wrapper's saved /proc/PID/maps
        # stands in when there is one.
        no_files = without_file_note(core, w("core.no-nt-file"))
        run = Run([coreanalyze, no_files, "--json"])
        problems = same_stacks(run, expected)
        if not any("modules recovered from" in warning for warning in warnings_of(run) or []):
            problems.append("want a warning that the modules were recovered from memory")
        results.check("%s: core without NT_FILE reads through the ELF headers in memory" % label,
                      problems)
        for name, path in (
                ("ABRT maps", make_abrt_directory(no_files, proc, w("ccpp-no-nt-file"))),
                ("apport ProcMaps", write_apport_report(no_files, proc, w("no-nt-file.crash")))):
            run = Run([coreanalyze, path, "--json"])
            problems = same_stacks(run, expected)
            if not any("NT_FILE" in warning for warning in warnings_of(run) or []):
                problems.append("want a warning that the saved maps stand in for NT_FILE")
            results.check("%s: %s stand in for a missing NT_FILE" % (label, name), problems)

        bad = [
            ("corrupt zstd", [coreanalyze, corrupt(w("core.zst"), w("bad.zst"))],
             (EXIT_BAD_INPUT,), "corrupt zstd data"),
            ("corrupt xz", [coreanalyze, corrupt(w("core.xz"), w("bad.xz"))],
             (EXIT_BAD_INPUT,), "corrupt xz data"),
            ("zstd cut before any of the core", [coreanalyze, cut(w("core.zst"), 0.0001,
                                                                   w("tiny.zst"))],
             (EXIT_BAD_INPUT,), "ends before any of the core"),
            ("empty xz file", [coreanalyze, cut(w("core.xz"), 0, w("empty.xz"))],
             (EXIT_BAD_INPUT,), "empty"),
            ("apport base64 garbage",
             [coreanalyze, write_apport_report(core, proc, w("garbage.crash"), garbage=True)],
             (EXIT_BAD_INPUT,), "not base64"),
            ("apport without CoreDump",
             [coreanalyze, write_apport_report(core, proc, w("nocore.crash"), with_core=False)],
             (EXIT_BAD_INPUT,), "no CoreDump field"),
            ("ABRT directory without coredump",
             [coreanalyze, make_abrt_directory(core, proc, w("ccpp-nocore"), with_coredump=False)],
             (EXIT_BAD_INPUT,), "without a readable coredump"),
            ("directory that is no ABRT directory", [coreanalyze, w("empty-dir")],
             (EXIT_BAD_INPUT,), "not an ABRT problem directory"),
        ]
        os.mkdir(w("empty-dir"))
        for name, argv, codes, words in bad:
            results.check("%s: %s" % (label, name), one_line(Run(argv), codes, words))

        check_coredumpctl(coreanalyze, label, core, proc, expected, workdir, results)

        # Cut compressed cores: what the prefix holds is analysed as a truncated core.
        for name, path in (("zstd", w("core.zst")), ("xz", w("core.xz")), ("lz4", w("core.lz4"))):
            run = Run([coreanalyze, cut(path, 0.5, path + ".half"), "--json"])
            problems = []
            if run.code not in (EXIT_PARTIAL, EXIT_TRUNCATED, 0):
                problems.append("want exit 5, 8 (or 0 when the stacks lie before the cut)")
            if not any("ends early" in line for line in run.stderr_lines) and "ends early" not in run.stdout:
                problems.append("want a warning that the data ends early")
            if run.code == EXIT_TRUNCATED and not any("truncated" in l for l in run.stderr_lines):
                problems.append("want the truncation named")
            if problems:
                problems.append(run.describe())
            results.check("%s: %s cut at half -> exit %d" % (label, name, run.code), problems)
    except cores.CoreError as error:
        results.check("%s: take a core" % label, [str(error)])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def abrt_open_fds(pid):
    """The `open_fds` item abrt-hook-ccpp writes: "FD:PATH" and the fd's fdinfo, for each fd."""
    text = ""
    for name in sorted(os.listdir("/proc/%d/fd" % pid), key=int):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, name))
            with open("/proc/%d/fdinfo/%s" % (pid, name)) as stream:
                info = stream.read()
        except OSError:
            continue
        text += "%s:%s\n%s\n" % (name, target, info)
    return text


def check_open_fds(coreanalyze, results):
    """A core holds no file table: ABRT's open_fds names the FIFO a thread blocks reading."""
    interpreter = interpreters.resolve("debian-3.11")
    if interpreter is None:
        results.report("SKIP", "ABRT open_fds", ["debian-3.11 is not installed"])
        return
    workdir = tempfile.mkdtemp(prefix="hangpy-open-fds-")
    truth_path = os.path.join(workdir, "truth.json")
    try:
        argv = [interpreter.executable, os.path.join(cores.PROGRAMS, "fifo_reader.py"), truth_path]
        with BlockedProgram(argv, workdir, truth_path) as program:
            truth = program.truth
            core = cores.gcore(truth["pid"], os.path.join(workdir, "core"))
            with open("/proc/%d/cmdline" % truth["pid"], "rb") as stream:
                cmdline = stream.read()
            proc = {"pid": truth["pid"], "executable": os.readlink("/proc/%d/exe" % truth["pid"]),
                    "cmdline": cmdline, "maps": b"", "environ": b""}
            directory = make_abrt_directory(core, proc, os.path.join(workdir, "ccpp-fifo"))
            with open(os.path.join(directory, "open_fds"), "w") as stream:
                stream.write(abrt_open_fds(truth["pid"]))
        problems = []
        for label, target in (("ABRT directory", directory), ("the bare core", core)):
            run = Run([coreanalyze, target, "--json"])
            try:
                threads = json.loads(run.stdout)["threads"]
            except (ValueError, KeyError):
                problems.append("%s: no document: %s" % (label, run.describe()))
                continue
            description = (threads[0].get("blocked_on") or {}).get("description") or ""
            named = "fd %d is %s" % (truth["fd"], truth["path"]) in description
            if named != (label == "ABRT directory"):
                problems.append("%s: blocked on %r%s names fd %d (%s)" % (
                    label, description, "" if named else " never", truth["fd"], truth["path"]))
        results.check("debian-3.11: ABRT open_fds names the FIFO behind a blocked read", problems)
    except (cores.CoreError, NeverBlocked) as error:
        results.report("FAIL", "ABRT open_fds: %s" % error)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coreanalyze", default=os.path.join(REPO, "build", "bin", "coreanalyze"))
    args = parser.parse_args()
    missing = [tool for tool in ("zstd", "lz4", "xz", "gzip") if not shutil.which(tool)]
    results = Results()
    if missing:
        results.report("SKIP", "every input form", ["%s missing: run scripts/install-deps"
                                                    % ", ".join(missing)])
        return results.finish()
    for name, interpreter in interpreters.each_installed(INTERPRETERS, results):
        check_interpreter(args.coreanalyze, name, interpreter, results)
    check_open_fds(args.coreanalyze, results)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
