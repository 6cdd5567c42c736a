#!/usr/bin/python3
"""Integration test: coreanalyze --native on real cores. For each interpreter present, take a gcore
(a kernel core for the Debian chroots' interpreters, read through --sysroot) of the deadlock
scenario and check each Python thread's merged stack (--json --native-all):

- the Python frames, in the stack's order, are the thread's ground truth frames;
- no call of the eval loop is left as a native frame (each one became its Python frames);
- the innermost frame is where the registers are ("initial"), every other one says how it was
  found ("cfi" or "frame_pointer");
- a thread blocked on a lock shows, innermost first: a futex/semaphore wait in libc,
  PyThread_acquire_lock_timed, its Python frames, and its start (start_thread, clone/clone3);
- the text output shows the same stack innermost first.

On Debian's python3.11, whose symbol table python3.11-dbg installs as a separate debug file under
/usr/lib/debug/.build-id, also: a static function of the interpreter is named from that file; not
once /usr/lib/debug is hidden (a mount namespace); again from the same file under --sysroot, and
from MiniDebugInfo (a copy of the executable given a .gnu_debugdata section made from that file);
and --inlined adds inlined functions from its DWARF without changing the other frames, and the C
frames' source lines (from the DWARF of python3.11-dbg and libc6-dbg) are those gdb finds
for the same addresses (gdb's `info line`), and no frame of the interpreter has one with
/usr/lib/debug hidden.

Exit status: 0 passed, 1 failed, 77 no interpreter of the list is installed.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_scenarios  # noqa: E402

NAMES = ["debian-3.11", "pyenv-3.8", "pyenv-3.9", "pyenv-3.10", "pyenv-3.11", "pyenv-3.12",
         "pyenv-3.13", "trixie-3.13", "sid-3.14", "sid-3.15"]
# Debian's python3.14 and 3.15 are stripped (their .symtab is in the -dbg package, which the
# chroot lacks) and GCC moved the eval loop's body out of the exported _PyEval_EvalFrameDefault
# into an unnamed clone: there the eval-loop calls are found by the entry frame each keeps on its
# C stack (PythonFrame::entry_frame_on_c_stack), not by name.
# The eval loop and the clones GCC makes of it (.lto_priv.0, .cold, .isra.0).
EVAL_LOOP = re.compile(r"^(_PyEval_EvalFrameDefault|PyEval_EvalFrameEx)(\..+)?$")
WAIT = re.compile(r"futex|sem_wait|sem_clockwait|sem_timedwait")
# Where the interpreter waits for a lock: up to 3.12 in PyThread_acquire_lock_timed; from 3.13
# a lock parks its thread on a semaphore (PyMutex).
LOCK_WAIT = re.compile(r"^(PyThread_acquire_lock_timed|_PySemaphore_Wait)$")
LOCK_WORKERS = ("worker-ab", "worker-ba")  # blocked in `with lock:` (tests/programs/deadlock.py)
# The interpreter whose separate debug file is installed with it (Debian's python3.11-dbg), and a
# static function in its lock workers' stacks: named only by the .symtab of that debug file.
DEBUG_FILE_INTERPRETER = "debian-3.11"
STATIC_FUNCTION = re.compile(r"^lock_PyThread_acquire_lock")


def innermost_first(native_stack):
    return list(reversed(native_stack["frames"]))


def index_of(frames, predicate):
    return next((i for i, frame in enumerate(frames) if predicate(frame)), None)


def native_symbol(frame):
    return frame.get("symbol") or "" if frame["kind"] == "native" else ""


def check_thread(name, truth_thread, thread):
    stack = thread.get("native_stack")
    if stack is None:
        return ["%s: no native_stack" % name]
    if stack.get("error"):
        return ["%s: no native stack: %s" % (name, stack["error"])]
    frames = innermost_first(stack)
    problems = []
    python = [[f["file"], f["line"], f["function"]] for f in reversed(frames) if f["kind"] == "python"]
    if python != truth_thread["frames"]:
        problems.append("%s: Python frames in the native stack %r, ground truth %r"
                        % (name, python, truth_thread["frames"]))
    for frame in frames:
        if frame["kind"] == "native" and not frame["inlined"] and EVAL_LOOP.match(native_symbol(frame)):
            problems.append("%s: eval-loop frame left native: %s" % (name, frame["symbol"]))
    native = [f for f in frames if f["kind"] == "native"]
    # The innermost machine frame (and what is inlined into it) is where the registers are.
    registers = (native[0]["pc"], native[0]["sp"]) if native else None
    wrong = [(f["symbol"], f["how"]) for f in native
             if f["how"] != ("initial" if (f["pc"], f["sp"]) == registers
                             else f["how"] if f["how"] in ("cfi", "frame_pointer") else "cfi")]
    if not native or wrong:
        problems.append("%s: frames that do not say how they were found right: %r" % (name, wrong))
    if name in LOCK_WORKERS:
        problems += check_lock_wait(name, frames)
    return problems


def in_libc(frame):
    return frame["kind"] == "native" and os.path.basename(frame.get("module") or "").startswith("libc.so")


def check_lock_wait(name, frames):
    """Innermost first: a futex/semaphore wait in libc, the interpreter's lock wait, the Python
    frames, the thread's start in libc. Without libc's debug file (the chroots) its internal
    functions have no name: then the wait is the innermost frame being in libc, and the start the
    run of libc frames the stack ends with."""
    wait = index_of(frames, lambda f: WAIT.search(native_symbol(f)))
    if wait is None and frames and in_libc(frames[0]) and not native_symbol(frames[0]):
        wait = 0
    acquire = index_of(frames, lambda f: LOCK_WAIT.match(native_symbol(f)))
    first_python = index_of(frames, lambda f: f["kind"] == "python")
    start = index_of(frames, lambda f: native_symbol(f) == "start_thread")
    clone = index_of(frames, lambda f: re.match(r"^_*clone3?$", native_symbol(f)))
    order = [wait, acquire, first_python, start, clone]
    if start is None and clone is None:
        libc_tail = len(frames)
        while libc_tail > 0 and in_libc(frames[libc_tail - 1]):
            libc_tail -= 1
        if len(frames) - libc_tail >= 2:
            order = [wait, acquire, first_python, libc_tail]
    if None in order or order != sorted(order):
        symbols = [native_symbol(f) or "(Python) " + f.get("function", "") for f in frames]
        return ["%s: expected futex/semaphore wait < %s < Python < start_thread < clone at "
                "positions %r; stack: %s" % (name, LOCK_WAIT.pattern, order, symbols)]
    return []


def check_text(coreanalyze, core, report, extra_args):
    text = subprocess.run([coreanalyze, core, "--native", "--no-color"] + extra_args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE).stdout.decode("utf-8", "replace")
    problems = []
    for thread in report["threads"]:
        frames = innermost_first(thread["native_stack"])
        lines = []
        for frame in frames:
            if frame["kind"] == "python":
                lines.append('(Python) File "%s", line %s' % (frame["file"], frame["line"]))
            elif frame.get("demangled"):
                lines.append(" in " + frame["demangled"])
        # The thread's own header line (a deadlock line above the threads names LWPs too).
        match = re.search(r"^Thread [^\n]*\(LWP %s\)" % thread["native_thread_id"], text, re.M)
        header = match.start() if match else -1
        end = text.find("\n\n", header)
        section = text[header:end] if header != -1 else ""
        positions, at = [], 0
        for line in lines:
            found = section.find(line, at)
            positions.append(found)
            at = max(at, found)
        if -1 in positions or positions != sorted(positions):
            problems.append("text output of LWP %s does not show its stack innermost first"
                            % thread["native_thread_id"])
    return problems


def check_core(coreanalyze, core, truth, extra_args=()):
    extra_args = list(extra_args)
    result = subprocess.run([coreanalyze, core, "--json", "--native-all"] + extra_args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    if result.returncode != 0:
        return ["coreanalyze --json --native-all exited %d: %s"
                % (result.returncode, result.stderr.decode("utf-8", "replace").strip())]
    report = json.loads(result.stdout.decode("utf-8"))
    by_lwp = {t["native_thread_id"]: t for t in report["threads"]}
    problems = []
    for truth_thread in truth["threads"].values():
        thread = by_lwp.get(truth_thread["native_id"])
        if thread is None:
            problems.append("no thread with LWP %s" % truth_thread["native_id"])
            continue
        problems += check_thread(truth_thread["name"], truth_thread, thread)
    for other in report.get("threads_without_python") or []:
        if "native_stack" not in other:
            problems.append("--native-all: LWP %s has no native_stack" % other["native_thread_id"])
    return problems or check_text(coreanalyze, core, report, extra_args)


def run_json(argv):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if result.returncode != 0:
        return None, "%s exited %d: %s" % (" ".join(argv[1:]), result.returncode,
                                           result.stderr.decode("utf-8", "replace").strip())
    return json.loads(result.stdout.decode("utf-8")), None


def worker_frames(report):
    """The native frames of the lock workers' stacks, innermost first."""
    return [f for t in report["threads"] if t.get("name") in LOCK_WORKERS
            for f in innermost_first(t.get("native_stack") or {"frames": []})
            if f["kind"] == "native"]


def build_id_debug_file(executable):
    """/usr/lib/debug/.build-id/xx/yyyy.debug of `executable`, or None."""
    notes = subprocess.run(["readelf", "-n", executable], stdout=subprocess.PIPE).stdout.decode()
    match = re.search(r"Build ID: ([0-9a-f]{4,})", notes)
    if not match:
        return None
    build_id = match.group(1)
    path = "/usr/lib/debug/.build-id/%s/%s.debug" % (build_id[:2], build_id[2:])
    return path if os.path.exists(path) else None


def debug_dir_hidden(argv, empty_dir):
    """argv run in a mount namespace of its own where /usr/lib/debug is an empty directory."""
    return ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /usr/lib/debug && exec "$@"',
            empty_dir] + argv


def make_debug_sysroot(coreanalyze, core, root, debug_file):
    """A --sysroot of links to the core's mapped files plus a copy of the interpreter's debug file
    at its build-id path (a link into /usr/lib/debug would break once that is hidden)."""
    report, error = run_json([coreanalyze, core, "--json"])
    if error:
        raise RuntimeError(error)
    for path in report["process"]["modules"]:
        target = os.path.join(root, path.lstrip("/"))
        if os.path.exists(path) and not os.path.lexists(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.symlink(path, target)
    target = os.path.join(root, debug_file.lstrip("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    try:
        os.link(debug_file, target)
    except OSError:
        shutil.copy(debug_file, target)


def defined_symbols(path, dynamic, types=None):
    argv = ["nm", "--format=posix", "--defined-only"] + (["-D"] if dynamic else []) + [path]
    lines = subprocess.run(argv, stdout=subprocess.PIPE, check=True).stdout.decode().splitlines()
    return set(line.split()[0] for line in lines
               if len(line.split()) >= 2 and (types is None or line.split()[1] in types))


def with_minidebuginfo(executable, debug_file, out, workdir):
    """Copy `executable` to `out` with a MiniDebugInfo section (.gnu_debugdata: an xz-compressed
    ELF holding the .symtab entries of the functions .dynsym lacks), made from its separate debug
    file as Fedora's find-debuginfo makes it. The build-id stays the executable's."""
    keep = os.path.join(workdir, "keep-symbols")
    with open(keep, "w") as keep_file:
        functions = defined_symbols(debug_file, False, ("T", "t"))
        keep_file.write("\n".join(sorted(functions - defined_symbols(executable, True))) + "\n")
    mini = os.path.join(workdir, "mini-debuginfo")
    for argv in (["objcopy", "--only-keep-debug", "--remove-section", ".gdb_index",
                  "--remove-section", ".comment", "--keep-symbols=" + keep, debug_file, mini],
                 ["objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section",
                  ".comment", "--keep-symbols=" + keep, mini],
                 ["xz", "-f", mini]):
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), done.returncode,
                                                    done.stdout.decode("utf-8", "replace").strip()))
    if os.path.lexists(out):
        os.unlink(out)
    shutil.copy(executable, out)
    subprocess.run(["objcopy", "--add-section", ".gnu_debugdata=" + mini + ".xz", out],
                   check=True)


def check_debug_files(coreanalyze, core, interpreter, workdir):
    """(label, problems) of the separate-debug-file cases; where they cannot run here, one
    (label, why not)."""
    label = "--native: the separate-debug-file cases"
    debug_file = build_id_debug_file(interpreter.executable)
    if debug_file is None:
        return [(label, "no separate debug file for %s (Debian: apt-get install python3.11-dbg)"
                 % interpreter.executable)]
    empty = os.path.join(workdir, "empty")
    os.mkdir(empty)
    hiding = subprocess.run(debug_dir_hidden(["true"], empty), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    if hiding.returncode != 0:
        output = hiding.stdout.decode("utf-8", "replace").strip()
        return [(label, "cannot hide /usr/lib/debug in a mount namespace of its own (unshare -m "
                 "and mount --bind need root%s): exit %d: %s"
                 % ("; in a chroot, \"/\" is no mount point, which unshare cannot make private"
                    if "propagation" in output else "", hiding.returncode, output))]
    argv = [coreanalyze, core, "--json", "--native"]
    cases = []
    report, error = run_json(argv)
    symbols = [native_symbol(f) for f in worker_frames(report)] if report else []
    problems = [error] if error else []
    if report and not any(STATIC_FUNCTION.match(symbol) for symbol in symbols):
        problems.append("no %s among the workers' frames: %r" % (STATIC_FUNCTION.pattern, symbols))
    cases.append(("--native: static function named from /usr/lib/debug/.build-id", problems))

    hidden, error = run_json(debug_dir_hidden(argv, empty))
    problems = [error] if error else []
    hidden_symbols = [native_symbol(f) for f in worker_frames(hidden)] if hidden else []
    if hidden and any(STATIC_FUNCTION.match(symbol) for symbol in hidden_symbols):
        problems.append("%s named with /usr/lib/debug hidden: %r"
                        % (STATIC_FUNCTION.pattern, hidden_symbols))
    if hidden and len(hidden_symbols) != len(symbols):
        problems.append("%d worker frames with the debug file, %d without"
                        % (len(symbols), len(hidden_symbols)))
    cases.append(("--native: not named with /usr/lib/debug hidden", problems))

    root = os.path.join(workdir, "sysroot")
    make_debug_sysroot(coreanalyze, core, root, debug_file)
    in_root, error = run_json(debug_dir_hidden(argv + ["--sysroot", root], empty))
    problems = [error] if error else []
    # Only the interpreter's debug file is in the sysroot: libc's frames may lose their names.
    def interpreter_symbols(report):
        return [native_symbol(f) for f in worker_frames(report)
                if os.path.basename(f.get("module") or "") == os.path.basename(interpreter.executable)]
    if in_root and not any(STATIC_FUNCTION.match(name) for name in interpreter_symbols(in_root)):
        problems.append("no %s among the interpreter's frames through --sysroot: %r"
                        % (STATIC_FUNCTION.pattern, interpreter_symbols(in_root)))
    elif in_root and interpreter_symbols(in_root) != interpreter_symbols(report):
        problems.append("the interpreter's frames through --sysroot %r, with the host's debug "
                        "file %r" % (interpreter_symbols(in_root), interpreter_symbols(report)))
    cases.append(("--native: named from the debug file under --sysroot", problems))

    if all(shutil.which(tool) for tool in ("nm", "objcopy", "xz")):
        root = os.path.join(workdir, "sysroot-minidebuginfo")
        make_debug_sysroot(coreanalyze, core, root, debug_file)
        os.unlink(os.path.join(root, debug_file.lstrip("/")))  # only .gnu_debugdata names them
        with_minidebuginfo(interpreter.executable, debug_file,
                           os.path.join(root, interpreter.executable.lstrip("/")), workdir)
        mini, error = run_json(debug_dir_hidden(argv + ["--sysroot", root], empty))
        problems = [error] if error else []
        if mini and not any(STATIC_FUNCTION.match(name) for name in interpreter_symbols(mini)):
            problems.append("no %s among the interpreter's frames with MiniDebugInfo: %r"
                            % (STATIC_FUNCTION.pattern, interpreter_symbols(mini)))
        cases.append(("--native: named from MiniDebugInfo (.gnu_debugdata)", problems))
    else:
        cases.append(("--native: named from MiniDebugInfo (.gnu_debugdata)",
                      "nm, objcopy or xz missing (Debian: binutils, xz-utils)"))

    inlined, error = run_json(argv + ["--inlined"])
    hidden_inlined, _ = run_json(debug_dir_hidden(argv + ["--inlined"], empty))
    cases.append(("--inlined: C frames' source lines are gdb's", source_line_problems(inlined, hidden_inlined)))

    problems = [error] if error else []
    if inlined:
        frames = worker_frames(inlined)
        if not any(f["inlined"] for f in frames):
            problems.append("--inlined shows no inlined frame in the workers' stacks")
        outer = [native_symbol(f) for f in frames if not f["inlined"]]
        if outer != symbols:
            problems.append("--inlined changed the other frames: %r, without %r" % (outer, symbols))
    cases.append(("--inlined: inlined functions from DWARF, other frames unchanged", problems))
    return cases


def elf_is_executable(path):
    """True for an ET_EXEC file (addresses are its own), False for ET_DYN (offsets from its base)."""
    with open(path, "rb") as elf:
        header = elf.read(18)
    return len(header) == 18 and header[16] == 2


GDB_LINE = re.compile(r'^Line (\d+) of "([^"]+)"')


def gdb_lines(module, addresses):
    """{address: (base name of the file, line)} as gdb's `info line *ADDRESS` gives them on the
    module (its debug file found by build-id, as gdb does). gdb, not binutils' addr2line: for
    some lines of Debian 12's libc (DWARF 5), addr2line 2.40 names the file that includes the
    right one (sem_wait.c for nptl/sem_waitcommon.c, whose line 183 is the one meant)."""
    argv = ["gdb", "-nx", "-batch"]
    for address in addresses:
        argv += ["-ex", "info line *0x%x" % address]
    result = subprocess.run(argv + [module], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    found = {}
    lines = [l for l in result.stdout.decode("utf-8", "replace").splitlines()
             if l.startswith(("Line ", "No line"))]
    for address, line in zip(addresses, lines):
        match = GDB_LINE.match(line)
        found[address] = (os.path.basename(match.group(2)), int(match.group(1))) if match else None
    return found


def source_line_problems(report, hidden):
    """Each C frame's source line against gdb's on the module at the same address (a return
    address looked up one byte earlier). The frames are outermost first; a frame whose inlined
    callee follows it shows the inlined call's site, which `info line` does not give: left out."""
    if shutil.which("gdb") is None:
        return ["gdb missing (it is the reference for the lines)"]
    if not report:
        return ["no report"]
    wanted = {}  # (module, address) -> [(symbol, our (file, line))]
    for thread in report["threads"]:
        frames = (thread.get("native_stack") or {}).get("frames", [])
        for index, frame in enumerate(frames):
            source, module = frame.get("source"), frame.get("module")
            if not source or not module or frame.get("inlined"):
                continue
            if index + 1 < len(frames) and frames[index + 1].get("inlined"):
                continue  # (outermost first) a call site of an inlined function
            pc = int(frame["pc"], 16)
            address = pc if elf_is_executable(module) else frame["module_offset"]
            if frame["how"] != "initial":
                address -= 1
            wanted.setdefault((module, address), []).append(
                (frame.get("symbol"), (os.path.basename(source["file"]), source["line"])))
    checked, problems = 0, []
    modules = sorted({module for module, _ in wanted})
    for module in modules:
        addresses = sorted(address for m, address in wanted if m == module)
        reference = gdb_lines(module, addresses)
        for address in addresses:
            for symbol, got in wanted[(module, address)]:
                checked += 1
                if reference.get(address) != got:
                    problems.append("%s at 0x%x in %s: %s:%d, gdb says %s"
                                    % (symbol, address, module, got[0], got[1], reference.get(address)))
    if checked < 5:
        problems.append("only %d C frames have a source line" % checked)
    for thread in (hidden or {}).get("threads", []):
        for frame in (thread.get("native_stack") or {}).get("frames", []):
            if frame.get("source") and "python3" in os.path.basename(frame.get("module") or ""):
                problems.append("with /usr/lib/debug hidden, %s has a source line %s"
                                % (frame.get("symbol"), frame["source"]))
                break
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()

    def check(core, truth, interpreter, workdir):
        # A chroot's files are read through --sysroot.
        extra_args = ["--sysroot", interpreter.root] if interpreter.root else []
        cases = [("--native", check_core(args.coreanalyze, core, truth, extra_args))]
        if interpreter.name == DEBUG_FILE_INTERPRETER:
            cases += check_debug_files(args.coreanalyze, core, interpreter, workdir)
        return cases

    # gdb's gcore of a chrooted process loses other threads' stacks (run_scenarios.py): the
    # kernel's core then.
    return run_scenarios.check_each_interpreter(
        NAMES, "deadlock", "hangpy-native-", check,
        kind_for=lambda interpreter: "kernel" if interpreter.root else "gcore")


if __name__ == "__main__":
    sys.exit(main())
