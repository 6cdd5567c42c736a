#!/usr/bin/python3
"""Robustness: coreanalyze on snapshot cores of real processes (tests/corpus) whose memory has been
corrupted at random (a fixed seed, so every run tries the same cores). Each run must end by itself
within the time limit, with one of coreanalyze's own exit codes, never a signal: corrupt memory
gives partial output or a one-line error, never a crash or an endless loop.

Besides the random mutations, each core gets targeted ones: the version texts coreanalyze parses
(sys.version in memory, libpython's file name in the NT_FILE note) rewritten with numbers too big
for an int, which once ended coreanalyze with std::out_of_range. And the bundled example core with
its headers damaged as issue 22 found them (cut inside its program headers, a 32-bit class, a note
of 4 GB, a note segment of 1 TB): exit 3 and a last line that names the damage, never "no Python
interpreter found".

Exit status: 0 passed, 1 failed, 77 no corpus or no zstd.
"""
import argparse
import glob
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(os.path.dirname(HERE), "corpus")
ALLOWED_EXIT_CODES = (0, 4, 5, 6)
TIMEOUT_SECONDS = 20
MUTATIONS_PER_CORE = 12


def load_segments(data):
    """(file offset, size) of each PT_LOAD's bytes in an ELF64 core."""
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segments = []
    for index in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + index * phentsize)
        if p_type == 1 and p_filesz:
            segments.append((p_offset, p_filesz))
    return segments


def mutate(data, rng):
    """A copy with some memory bytes changed: pointers smashed, words zeroed, bytes flipped."""
    out = bytearray(data)
    segments = load_segments(data)
    for _ in range(rng.randint(1, 40)):
        offset, size = rng.choice(segments)
        at = offset + rng.randrange(0, max(1, size - 8)) // 8 * 8
        kind = rng.randrange(3)
        if kind == 0:
            out[at:at + 8] = struct.pack("<Q", rng.getrandbits(64))
        elif kind == 1:
            out[at:at + 8] = bytes(8)
        else:
            out[at] ^= 1 << rng.randrange(8)
    return bytes(out)


# sys.version's start ("3.8.18 (default, Nov 23 ..."): the space and the next two words become
# digits, so that the micro version reads as 18 followed by ten nines or more.
SYS_VERSION = re.compile(rb"(?<=[0-9]\.[0-9]\.)([0-9]{1,2})( \([a-z]+, [A-Za-z]{3})(?= )")
# The interpreter's file names in NT_FILE ("/usr/bin/python3.11", ".../lib/libpython3.10.so.1.0"):
# the last two components rewritten in place, same length, to "python3.999...9", so the name
# parser meets a minor version of ten digits or more.
PYTHON_FILE_NAME = re.compile(rb"[^/\0]+/(?:bin|lib)/(?:lib)?python[23]\.[0-9]+[^/\0]*(?=\0)")


def overflowing_version_texts(data):
    """(kind, copy) pairs: `data` with one version text given numbers too big for an int."""
    copies = []
    # Every copy of the text: the one the interpreter's sys dict holds is among them.
    version = SYS_VERSION.sub(lambda match: match.group(1) + b"9" * len(match.group(2)), data)
    if version != data:
        copies.append(("sys.version", version))
    names = PYTHON_FILE_NAME.sub(
        lambda match: b"python3." + b"9" * (len(match.group(0)) - len(b"python3.")), data)
    if names != data:
        copies.append(("python file name", names))
    return copies


def crafted_headers(data):
    """(label, core, exit code, words its one line must hold): damage a header names, each told
    as what it is, never as a process without Python (issue 22)."""
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phnum, = struct.unpack_from("<H", data, 0x38)
    cases = [("cut inside the program headers", data[:phoff + 56 * 3 + 10], 3, "inside its program header table")]
    x32 = bytearray(data)
    x32[4] = 1  # ELFCLASS32
    cases.append(("a 32-bit (ELFCLASS32) header", bytes(x32), 3, "32-bit"))
    for index in range(phnum):
        p_type, = struct.unpack_from("<I", data, phoff + 56 * index)
        if p_type != 4:  # PT_NOTE
            continue
        offset, = struct.unpack_from("<Q", data, phoff + 56 * index + 8)
        note = bytearray(data)
        struct.pack_into("<I", note, offset + 4, 0xfffffff0)  # the first note's n_descsz
        cases.append(("a note of 4 GB", bytes(note), 3, "notes are corrupt"))
        segment = bytearray(data)
        struct.pack_into("<Q", segment, phoff + 56 * index + 32, 1 << 40)  # p_filesz: 1 TB
        cases.append(("a note segment of 1 TB", bytes(segment), 3, "notes are corrupt"))
        break
    return cases


def run_crafted(coreanalyze, path, label, code, words):
    try:
        result = subprocess.run([coreanalyze, path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return "FAIL %s: no answer in %d s" % (label, TIMEOUT_SECONDS)
    lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
    if result.returncode != code or not lines or words not in lines[-1]:
        return "FAIL %s: exit %d, want %d and %r in the last line: %r" % (label, result.returncode, code, words, lines)
    return None


def run_one(coreanalyze, path, label):
    """A problem line, or None when coreanalyze ended in time with one of its own exit codes."""
    try:
        result = subprocess.run([coreanalyze, path, "--json"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return "FAIL %s: no answer in %d s" % (label, TIMEOUT_SECONDS)
    stderr = result.stderr.decode("utf-8", "replace")
    if result.returncode not in ALLOWED_EXIT_CODES or "Sanitizer" in stderr:
        return "FAIL %s: exit %d %s" % (label, result.returncode, stderr.strip()[-400:])
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--mutations", type=int, default=MUTATIONS_PER_CORE,
                        help="corrupted copies of each core (default %(default)s)")
    args = parser.parse_args()
    cores = sorted(glob.glob(os.path.join(CORPUS, "*", "deadlock.core.zst")))
    if not cores or shutil.which("zstd") is None:
        print("SKIP: no corpus or no zstd")
        return SKIP
    rng = random.Random(20261122)
    workdir = tempfile.mkdtemp(prefix="hangpy-corrupt-")
    failed = ran = 0
    version_kinds = set()
    try:
        for compressed in cores:
            label = os.path.basename(os.path.dirname(compressed))
            original = subprocess.run(["zstd", "-q", "-d", "-c", compressed],
                                      stdout=subprocess.PIPE, check=True).stdout
            copies = [("mutation %d" % attempt, mutate(original, rng))
                      for attempt in range(args.mutations)]
            for kind, copy in overflowing_version_texts(original):
                version_kinds.add(kind)
                copies.append((kind + " overflowing", copy))
            for name, copy in copies:
                path = os.path.join(workdir, "core")
                with open(path, "wb") as stream:
                    stream.write(copy)
                ran += 1
                problem = run_one(args.coreanalyze, path, "%s %s" % (label, name))
                if problem:
                    failed += 1
                    print(problem)
        example = subprocess.run(["zstd", "-q", "-d", "-c", os.path.join(os.path.dirname(CORPUS), "..", "examples",
                                                                          "deadlock.core.zst")],
                                 stdout=subprocess.PIPE, check=True).stdout
        for name, copy, code, words in crafted_headers(example):
            path = os.path.join(workdir, "crafted")
            with open(path, "wb") as stream:
                stream.write(copy)
            ran += 1
            problem = run_crafted(args.coreanalyze, path, "the example core with " + name, code, words)
            if problem:
                failed += 1
                print(problem)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for kind in ("sys.version", "python file name"):
        if kind not in version_kinds:
            failed += 1
            print("FAIL: no corpus core has a %s to rewrite; the targeted case did not run" % kind)
    print("%d passed, %d failed" % (ran - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
