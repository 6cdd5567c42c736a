#!/usr/bin/python3
"""Integration test (issue 35): a core whose threads' stacks were saved as zeros says so. gdb 13's
gcore of a process on a newer glibc (2.43) writes zeros for every thread's stack; the frames then
end early with "null object pointer" and, without this, nothing said why. A real gcore of
tests/programs/deadlock.py (Debian's python3.11, three threads) has the memory segments holding
its threads' stack pointers overwritten with zeros, as that gcore leaves them; coreanalyze must
end with its own exit code and one warning that names the zeros, every thread's LWP and the way
out (a kernel core or --pid --snapshot). The untouched core gives no such warning.

Exit status: 0 passed, 1 failed, 77 Debian's python3.11 or gdb is not installed.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
from results import Results  # noqa: E402

WARNING = "holds only zeros at the stack pointer of"
NT_PRSTATUS = 1
PRSTATUS_PID = 32            # struct elf_prstatus (x86-64): pr_pid
PRSTATUS_RSP = 112 + 19 * 8  # pr_reg: user_regs_struct's rsp, the 20th register


def program_headers(data):
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for index in range(phnum):
        yield struct.unpack_from("<IIQQQQQQ", data, phoff + index * phentsize)


def thread_stack_pointers(data):
    """{LWP: rsp} from the core's NT_PRSTATUS notes."""
    threads = {}
    for p_type, _, offset, _, _, filesz, _, _ in program_headers(data):
        if p_type != 4:  # PT_NOTE
            continue
        at, end = offset, offset + filesz
        while at + 12 <= end:
            namesz, descsz, note_type = struct.unpack_from("<III", data, at)
            desc = at + 12 + ((namesz + 3) & ~3)
            if note_type == NT_PRSTATUS:
                lwp, = struct.unpack_from("<i", data, desc + PRSTATUS_PID)
                rsp, = struct.unpack_from("<Q", data, desc + PRSTATUS_RSP)
                threads[lwp] = rsp
            at = desc + ((descsz + 3) & ~3)
    return threads


def zero_stacks(path):
    """Overwrites, in the core at `path`, every PT_LOAD holding a thread's stack pointer with
    zeros; returns the LWPs."""
    with open(path, "rb") as stream:
        data = bytearray(stream.read())
    threads = thread_stack_pointers(data)
    for p_type, _, offset, vaddr, _, filesz, _, _ in program_headers(data):
        if p_type == 1 and any(vaddr <= sp < vaddr + filesz for sp in threads.values()):
            data[offset:offset + filesz] = bytes(filesz)
    with open(path, "wb") as stream:
        stream.write(data)
    return sorted(threads)


def main():
    args = interpreters.driver_arguments(__doc__)
    results = Results()
    for name, interpreter in interpreters.each_installed(args.interpreter or ["debian-3.11"], results):
        workdir = tempfile.mkdtemp(prefix="hangpy-zeroed-")
        try:
            with cores.ScenarioProcess(interpreter, "deadlock.py", workdir) as process:
                process.wait_for_ground_truth()
                core = process.take_core("gcore")
            before = subprocess.run([args.coreanalyze, core], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, timeout=60)
            problems = []
            if WARNING.encode() in before.stderr:
                problems.append("the untouched core is said to hold zeros: %r" % before.stderr[-300:])
            lwps = zero_stacks(core)
            after = subprocess.run([args.coreanalyze, core], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=60)
            err = after.stderr.decode("utf-8", "replace")
            lines = [line for line in err.splitlines() if WARNING in line]
            if after.returncode not in (0, 4, 5):
                problems.append("exit %d: %s" % (after.returncode, err[-300:]))
            if len(lines) != 1:
                problems.append("want one warning with %r, got: %r" % (WARNING, err[-600:]))
            else:
                want = ["of %d of its %d threads" % (len(lwps), len(lwps)), "a kernel core",
                        "--pid --snapshot"] + ["%d" % lwp for lwp in lwps]
                problems += ["the warning %r lacks %r" % (lines[0], w) for w in want if w not in lines[0]]
            if not after.stdout.startswith(b"Process "):
                problems.append("no report at all: %r" % after.stdout[:200])
            results.check("%s: zeroed thread stacks are named" % name, problems)
        except (cores.CoreError, subprocess.TimeoutExpired) as error:
            results.check("%s: zeroed thread stacks" % name, ["%s: %s" % (type(error).__name__, error)])
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
