"""Start a scenario program, wait for its ground truth, and take a core of it.

Two kinds of core: "gcore" (gdb snapshots the live process) and "kernel" (kill -ABRT with
RLIMIT_CORE raised, the kernel writes it where /proc/sys/kernel/core_pattern says).
"""
import glob
import json
import os
import resource
import shutil
import signal
import subprocess
import time

PROGRAMS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "programs")
GROUND_TRUTH_TIMEOUT = 30.0
# After the ground truth appears its reporter thread still has to exit.
THREAD_EXIT_TIMEOUT = 10.0
GCORE_TIMEOUT = 600.0  # a process with a 1 GB heap takes a while

CORE_KINDS = ("gcore", "kernel")


class CoreError(Exception):
    """Taking the core failed; the message is one line."""


def scenario_environment():
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONWARNINGS", "PYTHONSAFEPATH"):
        env.pop(name, None)
    env["LC_ALL"] = "C.UTF-8"  # 3.6 needs a UTF-8 locale to import a non-ASCII file name
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the source tree
    return env


def kernel_core_unavailable_reason():
    """None when kill -ABRT leaves a core file we can find, else why not."""
    try:
        with open("/proc/sys/kernel/core_pattern") as pattern_file:
            pattern = pattern_file.read().strip()
    except OSError as error:
        return "cannot read core_pattern: %s" % error
    if pattern.startswith("|"):
        return "core_pattern pipes to a handler (%s)" % pattern.split()[0]
    return None


def single_core_kind(interpreter):
    """The one core a test that needs every thread's stack takes: gcore, but in a chroot the
    kernel's core where it can be had (gcore of a chrooted process loses the other threads'
    stacks: run_scenarios.py)."""
    if interpreter.root and not kernel_core_unavailable_reason():
        return "kernel"
    return "gcore"


def truth_and_core(interpreter, program, workdir):
    """Runs `program` until it has written its ground truth, then takes single_core_kind's core
    of it: (ground truth, core path)."""
    kind = single_core_kind(interpreter)
    with ScenarioProcess(interpreter, program, workdir,
                         raise_core_limit=(kind == "kernel")) as process:
        truth = process.wait_for_ground_truth()
        return truth, process.take_core(kind)


def _kernel_core_glob(pid, cwd_host, interpreter):
    with open("/proc/sys/kernel/core_pattern") as pattern_file:
        pattern = pattern_file.read().strip()
    try:
        with open("/proc/sys/kernel/core_uses_pid") as uses_pid_file:
            uses_pid = uses_pid_file.read().strip() == "1"
    except OSError:
        uses_pid = False
    if uses_pid and "%p" not in pattern:
        pattern += ".%p"
    out, i = "", 0
    while i < len(pattern):
        if pattern[i] == "%" and i + 1 < len(pattern):
            code = pattern[i + 1]
            out += {"p": str(pid), "%": "%"}.get(code, "*")
            i += 2
        else:
            out += glob.escape(pattern[i])
            i += 1
    if out.startswith("/"):  # the kernel resolves it inside the process's root
        return interpreter.host_path(out)
    return os.path.join(cwd_host, out)


class ScenarioProcess(object):
    """A running scenario program; use as a context manager so it is always killed."""

    def __init__(self, interpreter, program, workdir, raise_core_limit=False, extra_args=(),
                 program_dir=None):
        """`program_dir`: run the programs from this directory of this machine (a copy made with
        install_programs, inside the interpreter's root if it has one) instead of
        tests/programs, so that the file names in the core do not depend on the checkout."""
        self.interpreter = interpreter
        self.workdir = workdir
        self.truth_path = os.path.join(workdir, "truth.json")
        guest_program = self._install_program(program, program_dir)
        argv = interpreter.command(interpreter.guest_path(workdir),
                                   [guest_program] + list(extra_args)
                                   + [interpreter.guest_path(self.truth_path)])
        # qemu-user writes an emulated process's core (take_core) only where RLIMIT_CORE allows.
        preexec = _unlimited_core if raise_core_limit or interpreter.emulator else None
        self.process = subprocess.Popen(argv, cwd=workdir, env=scenario_environment(),
                                        preexec_fn=preexec, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.pid = self.process.pid
        self.truth = None
        self.emulator_threads = self._emulator_threads() if interpreter.emulator else set()

    def _emulator_threads(self):
        """qemu-user's own threads (its RCU thread), which it starts before the guest program
        runs: they are in /proc but in no guest core, and the ground truth leaves them out."""
        deadline = time.time() + 2.0
        while time.time() < deadline:
            try:
                tasks = set(int(tid) for tid in os.listdir("/proc/%d/task" % self.pid))
            except OSError:
                return set()
            if len(tasks) > 1:
                return tasks - set([self.pid])
            time.sleep(0.005)
        return set()

    def _install_program(self, program, program_dir):
        """The program's path as the process sees it; copies the programs into a chroot."""
        if program_dir is None:
            if self.interpreter.root is None:
                return os.path.join(PROGRAMS, program)
            program_dir = install_programs(os.path.join(self.workdir, "programs"))
            if self.interpreter.emulator:
                # The emulated process finds them in its root first (qemu -L), as the core's
                # reader does under --sysroot; the ground truth is written beside, on this machine.
                install_programs(self.interpreter.host_path(program_dir))
        return self.interpreter.guest_path(os.path.join(program_dir, program))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.process.stdout.close()

    def output(self):
        """What the program printed (for error messages); only once it has exited."""
        if self.process.poll() is None:
            return ""
        return self.process.stdout.read().decode("utf-8", "replace").strip()

    def wait_for_ground_truth(self):
        """The ground truth document; waits until only the scenario's threads are left."""
        deadline = time.time() + GROUND_TRUTH_TIMEOUT
        while not os.path.exists(self.truth_path):
            if self.process.poll() is not None:
                raise CoreError("program exited with %s before writing its ground truth: %s"
                                % (self.process.returncode, self.output()[-500:]))
            if time.time() > deadline:
                raise CoreError("no ground truth after %d s" % GROUND_TRUTH_TIMEOUT)
            time.sleep(0.05)
        with open(self.truth_path) as truth_file:
            self.truth = json.load(truth_file)
        if "skip" not in self.truth:
            # The reporter thread ends after writing; threads that run no Python stay.
            if self.emulator_threads and self.truth.get("os_threads"):
                self.truth["os_threads"] = [tid for tid in self.truth["os_threads"]
                                            if tid not in self.emulator_threads]
                with open(self.truth_path, "w") as truth_file:  # as stored beside a snapshot
                    json.dump(self.truth, truth_file, indent=1, sort_keys=True)
            expected = len(self.truth["threads"])
            if self.truth.get("os_threads") and self.truth.get("reporter_native_id") is not None:
                expected = len(self.truth["os_threads"]) - 1
            self._wait_for_thread_count(expected + len(self.emulator_threads))
        return self.truth

    def _wait_for_thread_count(self, expected):
        deadline = time.time() + THREAD_EXIT_TIMEOUT
        while True:
            count = len(os.listdir("/proc/%d/task" % self.pid))
            if count == expected:
                return
            if time.time() > deadline:
                raise CoreError("process has %d threads, ground truth lists %d" % (count, expected))
            time.sleep(0.02)

    def take_core(self, kind):
        """Path of a core of the process (a sparse file in workdir); the process may be gone.
        An emulated process gives its emulator's core of the guest whatever the kind."""
        if self.interpreter.emulator:
            return qemu_core(self.process, self.workdir)
        if kind == "gcore":
            return self._gcore()
        if kind == "kernel":
            return self._kernel_core()
        raise ValueError(kind)

    def _gcore(self):
        return gcore(self.pid, os.path.join(self.workdir, "core.%d" % self.pid),
                     self.interpreter.root)

    def _kernel_core(self):
        return kernel_core(self.process, self.workdir, self.interpreter)


def kernel_core(process, workdir, interpreter):
    """kill -ABRT the subprocess.Popen `process` (started with RLIMIT_CORE raised) of
    `interpreter` and return the path of its core, moved into `workdir` as a sparse file."""
    reason = kernel_core_unavailable_reason()
    if reason:
        raise CoreError(reason)
    pattern = _kernel_core_glob(process.pid, workdir, interpreter)
    os.kill(process.pid, signal.SIGABRT)
    process.wait()  # reaped only after the kernel finished writing the core
    if process.returncode != -signal.SIGABRT:
        raise CoreError("process ended with %s, not SIGABRT" % process.returncode)
    found = glob.glob(pattern)
    if len(found) != 1:
        raise CoreError("expected one core matching %s, found %d" % (pattern, len(found)))
    core = os.path.join(workdir, "core.%d" % process.pid)
    if found[0] != core:
        shutil.move(found[0], core)
    dig_holes(core)
    return core


def qemu_core(process, workdir):
    """kill -ABRT the emulator `process` (started with RLIMIT_CORE raised, its cwd `workdir`):
    qemu-user writes the guest's core there as qemu_PROGRAM_DATE_PID.core, then dies of the signal,
    and the kernel writes the emulator's own x86-64 core, which is removed. Returns the guest's core,
    moved to workdir/core.PID."""
    os.kill(process.pid, signal.SIGABRT)
    process.wait()
    found = glob.glob(os.path.join(workdir, "qemu_*_%d.core" % process.pid))
    for name in os.listdir(workdir):
        if name == "core" or name.startswith("core."):
            os.remove(os.path.join(workdir, name))
    if len(found) != 1:
        raise CoreError("expected qemu's core of the guest in %s, found %d" % (workdir, len(found)))
    core = os.path.join(workdir, "core.%d" % process.pid)
    shutil.move(found[0], core)
    dig_holes(core)
    return core


def gcore(pid, core, root=None):
    """Snapshot live process `pid` into the sparse file `core` (its path) and return it; `root`:
    the chroot the process runs in, if any."""
    # What gcore(1) does, plus the chroot as gdb's sysroot: with the host's libc instead of
    # the chroot's, gdb misreads the threads and saves parts of their stacks as zeros.
    argv = ["gdb", "-batch", "-nx"]
    if root:
        argv += ["-ex", "set sysroot %s" % root]
    argv += ["-ex", "attach %d" % pid, "-ex", "gcore %s" % core, "-ex", "detach"]
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, timeout=GCORE_TIMEOUT)
    if result.returncode != 0 or not os.path.exists(core):
        tail = result.stdout.decode("utf-8", "replace").strip().splitlines()[-10:]
        raise CoreError("gcore failed (exit %d): %s" % (result.returncode, "\n".join(tail)))
    dig_holes(core)
    return core


def truth_when_blocked(process, truth_path, seconds, settle=0.0):
    """The ground truth a program started as `process` writes (atomically) to `truth_path` once it
    blocks, read after `settle` more seconds; None when it did not within `seconds` or ended."""
    deadline = time.time() + seconds
    while not os.path.exists(truth_path) and time.time() < deadline and process.poll() is None:
        time.sleep(0.05)
    if not os.path.exists(truth_path):
        return None
    time.sleep(settle)
    with open(truth_path) as stream:
        return json.load(stream)


def install_programs(directory):
    """Copy tests/programs to `directory` (replacing what is there); returns `directory`."""
    shutil.rmtree(directory, ignore_errors=True)
    shutil.copytree(PROGRAMS, directory, ignore=shutil.ignore_patterns("__pycache__"))
    return directory


def _unlimited_core():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def dig_holes(path):
    """Make a core sparse again: gcore writes every anonymous page, most of them zeros."""
    subprocess.run(["fallocate", "--dig-holes", path], check=True)


def disk_usage(path):
    """Bytes a (sparse) file really takes on disk."""
    return os.stat(path).st_blocks * 512
