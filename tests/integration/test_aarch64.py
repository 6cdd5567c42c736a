#!/usr/bin/python3
"""aarch64 cores, read on this x86-64 machine: each scenario program runs under Debian 12's arm64
python3.11 and Debian 11's arm64 python3.9 emulated by qemu-user (interpreters.py's arm64-3.11,
arm64-3.9), qemu writes the guest's core on SIGABRT, and coreanalyze --sysroot ROOT must read it
as the interpreter's own ground truth says; then it must read the same as the x86-64 twin
(debian-3.11, the same CPython 3.11.2; bullseye-3.9, 3.9.2) of the same program: the same threads, frames, states, "Blocked on" and deadlocks, once addresses and ids are
masked. The core's snapshot must read the same without the root, and with --native every Python
frame must be spliced into a native stack unwound through aarch64 code. With
HANGPY_AARCH64_COREANALYZE (an arm64 build's coreanalyze, run under qemu-aarch64-static on
Debian 11's arm64 glibc; scripts/test --aarch64 sets it) the same core must read the same on that
build too (package.qemu-aarch64 runs the arm64 tarball over the whole corpus).

  test_aarch64.py --coreanalyze build/bin/coreanalyze [--scenario deadlock ...]

qemu's cores have no NT_FILE and no text: the modules come from the dynamic linker's list and
their files under the root. Exit status: 0 passed, 1 failed, 77 skipped (no qemu, no root).
"""
import argparse
import difflib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import cores  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
from results import SKIP, Results  # noqa: E402

AARCH64 = "arm64-3.11"
TWIN = "debian-3.11"
# Each aarch64 interpreter and its x86-64 twin: the same Debian release's build of one version.
TWINS = {AARCH64: TWIN, "arm64-3.9": "bullseye-3.9"}
# The scenarios compared: every kind of wait the x86-64 suite checks, each a few seconds under
# emulation.
SCENARIOS = ("deadlock", "asyncio_hang", "generator", "method", "unicode_names", "finalizing",
             "native_thread")
# The arm64 build runs on Debian 11's arm64 glibc (scripts/make-glibc-sysroot --arch arm64, as
# package.qemu-aarch64 does): the cross toolchain's /usr/aarch64-linux-gnu can hold a libc that
# does not match its loader, which hangs threaded programs.
ARM64_GLIBC = os.environ.get("HANGPY_GLIBC_SYSROOT_ARM64", "/var/tmp/hangpy-glibc-sysroot-arm64")
ARM64_RUNNER = ["qemu-aarch64-static", "-L", ARM64_GLIBC]


def masked(text):
    """A report line with what differs between two runs of one program masked: addresses,
    thread and process ids, the temporary directory."""
    text = re.sub(r"0x[0-9a-f]+", "0x?", text)
    text = re.sub(r"\b(LWP|pid|process|Process) \d+", r"\1 ?", text)
    return re.sub(r"/[^ \"']*/programs/", "PROGRAMS/", text)


# aarch64 has only the newer form of some calls (the kernel's generic table): glibc's epoll_wait
# is epoll_pwait there, poll ppoll, select pselect6. The same wait.
SAME_CALL = {"epoll_pwait": "epoll_wait", "ppoll": "poll", "pselect6": "select"}


def view(report, lost=()):
    """`lost`: names of threads whose call's arguments the report says are lost (a qemu core's
    interrupted thread): their "Blocked on", which the arguments decide, is not compared."""
    """What must be the same on both machines: per thread (by name) its frames, state and wait;
    the deadlocks."""
    threads = []
    for thread in report.get("threads") or []:
        state = thread.get("state") or {}
        syscall = (state.get("syscall") or {}).get("name")
        syscall = SAME_CALL.get(syscall, syscall)
        blocked = thread.get("blocked_on") or {}
        threads.append({
            "name": thread.get("name"),
            "frames": [(os.path.basename(frame.get("file") or ""), frame.get("line"), frame.get("qualname"))
                       for frame in thread.get("frames") or []],
            "syscall": syscall,
            "gil": state.get("gil"),
            "main": state.get("main_thread"),
            "held_locks": len(state.get("held_locks") or []),
            "blocked_on": None if thread.get("name") in lost else masked(blocked.get("description") or ""),
        })
    threads.sort(key=lambda thread: (thread["name"] or "", thread["frames"]))
    deadlocks = sorted(masked(cycle.get("description") or "") for cycle in report.get("deadlocks") or [])
    return {"threads": threads, "deadlocks": deadlocks}


def arguments_lost(report):
    """The threads whose system call's arguments the report says are lost."""
    return set(thread.get("name") for thread in report.get("threads") or []
               if ((thread.get("state") or {}).get("syscall") or {"arguments": []}).get("arguments") is None)


def differences(label, want, got):
    if want == got:
        return []
    want_text = json.dumps(want, indent=1, sort_keys=True).splitlines()
    got_text = json.dumps(got, indent=1, sort_keys=True).splitlines()
    diff = list(difflib.unified_diff(want_text, got_text, "x86-64", label, lineterm="", n=1))
    return ["%s differs from the x86-64 twin:" % label] + diff[:40]


def report_of(argv, problems, what):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    try:
        return json.loads(result.stdout.decode("utf-8"))
    except ValueError:
        problems.append("%s printed no JSON (exit %d): %s" % (
            what, result.returncode, result.stderr.decode("utf-8", "replace").strip()[-300:]))
        return None


def twin_report(coreanalyze, scenario, twin):
    """The x86-64 twin's report of `scenario` (its kernel core, or gcore where the kernel's cannot
    be had), or None when the twin is not installed."""
    if twin is None:
        return None, []
    workdir = run_scenarios.scenario_workdir(twin, "hangpy-a64twin-")
    problems = []
    try:
        kind = "kernel" if not cores.kernel_core_unavailable_reason() else "gcore"
        core, _, _ = run_scenarios.capture(twin, scenario, kind, workdir)
        sysroot = ["--sysroot", twin.root] if twin.root else []
        return report_of([coreanalyze, "--json", core] + sysroot, problems, "coreanalyze (x86-64 twin)"), problems
    except run_scenarios.ScenarioSkipped as reason:
        return None, ["twin skipped: %s" % reason]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def native_problems(coreanalyze, core, root, truth):
    """--native: each Python thread's native stack holds all its Python frames, spliced between
    aarch64 frames of the interpreter (the eval loop's callers were unwound)."""
    problems = []
    report = report_of([coreanalyze, "--json", "--native", "--sysroot", root, core], problems,
                       "coreanalyze --native")
    if report is None:
        return problems
    for thread in report.get("threads") or []:
        native = (thread.get("native_stack") or {}).get("frames") or []
        python = [frame for frame in native if frame.get("kind") == "python"]
        unwound = [frame for frame in native if frame.get("kind") == "native"]
        if len(python) != len(thread.get("frames") or []) or len(unwound) < 3:
            problems.append("--native: thread %r has %d of %d Python frames among %d native ones" % (
                thread.get("name"), len(python), len(thread.get("frames") or []), len(unwound)))
    return problems


def page_size_of(core):
    """AT_PAGESZ (6) of the core's NT_AUXV note, or None."""
    with open(core, "rb") as core_file:
        header = core_file.read(64)
        phoff, = struct.unpack_from("<Q", header, 32)
        phnum, = struct.unpack_from("<H", header, 56)
        core_file.seek(phoff)
        table = core_file.read(56 * phnum)
        for index in range(phnum):
            kind, _, offset, _, _, size = struct.unpack_from("<IIQQQQ", table, 56 * index)
            if kind != 4:  # PT_NOTE
                continue
            core_file.seek(offset)
            notes = core_file.read(size)
            at = 0
            while at + 12 <= len(notes):
                name_size, desc_size, note_type = struct.unpack_from("<III", notes, at)
                desc = at + 12 + (name_size + 3) // 4 * 4
                if note_type == 6:  # NT_AUXV
                    for pair in range(desc, desc + desc_size - 15, 16):
                        key, value = struct.unpack_from("<QQ", notes, pair)
                        if key == 6:
                            return value
                at = desc + (desc_size + 3) // 4 * 4
    return None


def truth_this_core_can_show(truth, page_size):
    """The ground truth less what a qemu core cannot hold. With 64 KB pages emulated, the
    libraries' code is not saved (see below): the diagnosis, which unwinds through it, is not
    compared. (A call whose arguments qemu's core lost is handled by compare_diagnosis.)"""
    truth = dict(truth)
    if page_size:
        for key in ("waits", "held_locks", "deadlocks"):
            truth.pop(key, None)
    return truth


def check_scenario(coreanalyze, interpreter, twin, scenario, workdir, page_size=None):
    """`page_size`: the guest's page size (qemu's QEMU_PAGESIZE: 65536 is a GH200 kernel's)."""
    if page_size:
        os.environ["QEMU_PAGESIZE"] = str(page_size)
    try:
        core, _, truth = run_scenarios.capture(interpreter, scenario, "kernel", workdir)
    finally:
        os.environ.pop("QEMU_PAGESIZE", None)
    if page_size and page_size_of(core) != page_size:
        return ["the core's AT_PAGESZ is %r, want %d" % (page_size_of(core), page_size)]
    truth = truth_this_core_can_show(truth, page_size)
    problems = run_scenarios.check_core(coreanalyze, core, interpreter, truth)
    problems = [problem for problem in problems if not problem.startswith("warning: the core lists no mapped files")]
    if page_size:
        # qemu emulating 64 KB pages on this 4 KB host saves only the host pages behind each guest
        # page of the dynamic linker's data, which cuts its module list after the first library:
        # the Python side (stacks, names, process) is compared with the truth above, the rest is
        # not, for want of the libraries' code. A real 64 KB kernel's core has whole pages.
        return problems
    report = report_of([coreanalyze, "--json", "--sysroot", interpreter.root, core], problems, "coreanalyze")
    if report is None:
        return problems
    mine = view(report)
    problems += native_problems(coreanalyze, core, interpreter.root, truth)
    # The snapshot: the same without the root.
    snapshot = os.path.join(workdir, "snapshot.core")
    subprocess.run([coreanalyze, "--sysroot", interpreter.root, "--snapshot", snapshot, core],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    snapped = report_of([coreanalyze, "--json", snapshot], problems, "coreanalyze (snapshot)")
    if snapped is not None:
        problems += differences("the snapshot", mine, view(snapped))
    arm64_build = os.environ.get("HANGPY_AARCH64_COREANALYZE")
    if arm64_build:
        theirs = report_of(ARM64_RUNNER + [arm64_build, "--json", "--sysroot", interpreter.root, core],
                           problems, "the arm64 build")
        if theirs is not None:
            problems += differences("the arm64 build's report", mine, view(theirs))
    twin_report_, twin_problems = twin_report(coreanalyze, scenario, twin)
    problems += [problem for problem in twin_problems if not problem.startswith("twin skipped")]
    if twin_report_ is not None:
        lost = arguments_lost(report)
        problems += differences("the aarch64 core", view(twin_report_, lost), view(report, lost))
    return problems


CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpus")


def mixed_triage(coreanalyze):
    """`triage` over the corpus's x86-64 and aarch64 snapshots of one deadlock: one group, both
    processes alike (no emulator needed)."""
    workdir = tempfile.mkdtemp(prefix="hangpy-a64triage-")
    try:
        plain = []
        for name in (TWIN, AARCH64):  # both are named deadlock.core
            path = run_scenarios.decompress(os.path.join(CORPUS, name, "deadlock.core.zst"), workdir)
            os.rename(path, path + "." + name)
            plain.append(path + "." + name)
        result = subprocess.run([coreanalyze, "triage"] + plain, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, timeout=120)
        text = result.stdout.decode("utf-8", "replace")
        if "all 2 processes alike" not in text or "1 group" not in text:
            return ["triage did not find the two processes alike (exit %d):\n%s" % (
                result.returncode, text[:800] + result.stderr.decode("utf-8", "replace")[-300:])]
        return []
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--scenario", action="append", choices=SCENARIOS)
    args = parser.parse_args()
    results = Results()
    results.check("triage of an x86-64 and an aarch64 snapshot", mixed_triage(args.coreanalyze))
    installed = [name for name in TWINS if interpreters.resolve(name) is not None]
    if installed and not args.scenario:
        # Locals (--locals) of the aarch64 processes, as test_locals.py checks every interpreter's.
        argv = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_locals.py"),
                "--coreanalyze", args.coreanalyze]
        for name in installed:
            argv += ["--interpreter", name]
        locals_run = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        results.check("locals of %s (test_locals.py)" % ", ".join(installed), [] if locals_run.returncode == 0
                      else [locals_run.stdout.decode("utf-8", "replace")[-2000:]])
    for name, twin_name in TWINS.items():
        interpreter = interpreters.resolve(name)
        if interpreter is None:
            results.report("SKIP", "%s scenarios" % name, [interpreters.not_installed(name)])
            continue
        twin = interpreters.resolve(twin_name)
        if twin is None:
            # The twin comparison is a case of its own: its absence is a SKIP, said as one.
            results.report("SKIP", "%s scenarios against their x86-64 twin %s" % (name, twin_name),
                           [interpreters.not_installed(twin_name)])
        print("interpreter: %r, twin: %r" % (interpreter, twin))
        cases = [(scenario, None) for scenario in args.scenario or SCENARIOS]
        if not args.scenario and name == AARCH64:
            cases.append(("deadlock", 65536))
        for scenario, page_size in cases:
            workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-a64-")
            label = "%s: %s (qemu core%s)" % (name, scenario, ", 64 KB pages" if page_size else "")
            try:
                results.check(label, check_scenario(args.coreanalyze, interpreter, twin, scenario, workdir,
                                                    page_size))
            except (cores.CoreError, subprocess.TimeoutExpired) as error:
                results.check(label, [str(error)])
            except run_scenarios.ScenarioSkipped as reason:
                results.report("SKIP", label, [str(reason)])
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
                shutil.rmtree(interpreter.host_path(workdir), ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
