#!/usr/bin/python3
"""Robustness: coreanalyze on snapshot cores of real processes (tests/corpus) whose memory has been
corrupted at random (a fixed seed, so every run tries the same cores). Each run must end by itself
within the time limit, with one of coreanalyze's own exit codes, never a signal: corrupt memory
gives partial output or a one-line error, never a crash or an endless loop.

Exit status: 0 passed, 1 failed, 77 no corpus or no zstd.
"""
import argparse
import glob
import os
import random
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
    try:
        for compressed in cores:
            label = os.path.basename(os.path.dirname(compressed))
            original = subprocess.run(["zstd", "-q", "-d", "-c", compressed],
                                      stdout=subprocess.PIPE, check=True).stdout
            for attempt in range(args.mutations):
                path = os.path.join(workdir, "core")
                with open(path, "wb") as stream:
                    stream.write(mutate(original, rng))
                ran += 1
                try:
                    result = subprocess.run([args.coreanalyze, path, "--json"],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                            timeout=TIMEOUT_SECONDS)
                except subprocess.TimeoutExpired:
                    failed += 1
                    print("FAIL %s mutation %d: no answer in %d s" % (label, attempt, TIMEOUT_SECONDS))
                    continue
                stderr = result.stderr.decode("utf-8", "replace")
                if result.returncode not in ALLOWED_EXIT_CODES or "Sanitizer" in stderr:
                    failed += 1
                    print("FAIL %s mutation %d: exit %d %s" % (label, attempt, result.returncode,
                                                                stderr.strip()[-400:]))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("%d passed, %d failed" % (ran - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
