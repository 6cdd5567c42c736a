"""Run the real gdb in batch mode with a list of commands and split its output per command.

Each command is preceded by an `echo` of a marker line, so the output of every command (and its
error message: stderr is merged into stdout, in order) can be told apart.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "integration"))
import interpreters  # noqa: E402

GDB_TIMEOUT = 300
MARKER = "@@@hangpy-test@@@"
UBSAN_REPORT = re.compile(r"^\S+:\d+:\d+: runtime error: ", re.M)
# gdb's own chatter when it attaches or opens a core; not part of any command's output.
NOISE = re.compile(r"^(\[New LWP \d+\]|\[New Thread .*\]|\[Thread debugging using .*\]|"
                   r"Using host libthread_db library .*|warning: .*|\[Inferior \d+ .* detached\])$")


def gdb_path():
    return shutil.which("gdb")


class GdbOptions(object):
    """How to start gdb: with hangpy (init file + `load hangpy`) or with Debian's libpython.py."""

    def __init__(self, hangpy_init=None, libpython=False, hide_debug_info=False, gdb=None):
        self.hangpy_init = hangpy_init
        # Another gdb than this machine's own: gdb-multiarch for another machine's core.
        self.gdb = gdb
        self.libpython = libpython
        # Debian's /usr/bin/python3.11 is stripped; its debug info comes from python3.11-dbg
        # through /usr/lib/debug. Pointing gdb elsewhere shows what hangpy does without it.
        self.hide_debug_info = hide_debug_info

    def argv(self):
        argv = [self.gdb or gdb_path(), "-batch", "-nx", "-iex", "set pagination off",
                "-iex", "set width 0", "-iex", "set print thread-events off"]
        if not self.libpython:
            argv += ["-iex", "set auto-load python-scripts off"]
        if self.hide_debug_info:
            argv += ["-iex", "set debug-file-directory /nonexistent"]
        if self.hangpy_init:
            argv += ["-x", self.hangpy_init, "-ex", "load hangpy"]
        return argv


class GdbResult(object):
    def __init__(self, returncode, text, sections):
        self.returncode = returncode
        self.text = text          # everything gdb printed
        self.sections = sections  # [(name, output lines)] in command order

    def output(self, name):
        for section_name, lines in self.sections:
            if section_name == name:
                return lines
        raise KeyError(name)


def run_gdb(options, target_args, commands, timeout=GDB_TIMEOUT):
    """commands: [(name, gdb command)]; target_args: ["-p", pid] or [executable, core]."""
    argv = options.argv()
    for name, command in commands:
        argv += ["-ex", "echo \\n%s %s\\n" % (MARKER, name), "-ex", command]
    argv += ["-ex", "echo \\n%s end\\n" % MARKER]
    argv += list(target_args)
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, timeout=timeout)
    text = result.stdout.decode("utf-8", "replace")
    if UBSAN_REPORT.search(text):
        # A sanitizer build's module (UBSan) stopped gdb; what the test would compare is moot.
        sys.stderr.write(text)
        sys.exit("UBSan report from gdb running %s (above)" % " ".join(argv))
    sections = []
    current = None
    for line in text.splitlines():
        if line.startswith(MARKER + " "):
            current = (line[len(MARKER) + 1:], [])
            sections.append(current)
        elif current is not None and not NOISE.match(line):
            current[1].append(line)
    for _, lines in sections:  # the marker's leading "\n" leaves an empty line at the end
        while lines and lines[-1] == "":
            lines.pop()
    return GdbResult(result.returncode, text, sections)


def target_args_live(pid):
    return ["-p", str(pid)]


def target_args_core(executable, core):
    return [executable, core]


def split_threads(lines):
    """`thread apply all CMD` output -> {lwp: [lines]} (gdb's "Thread N (... (LWP L) ...):", or
    "Thread N (LWP L):" where gdb has no libthread_db, as on a core without its binaries)."""
    header = re.compile(r"^Thread \d+ \((?:.*\()?LWP (\d+)\).*:$")
    threads = {}
    current = None
    for line in lines:
        match = header.match(line)
        if match:
            current = threads.setdefault(int(match.group(1)), [])
        elif current is not None:
            current.append(line)
    for lines_of_thread in threads.values():
        while lines_of_thread and lines_of_thread[-1] == "":
            lines_of_thread.pop()
    return threads


def environment_problem(hangpy_init=None):
    """Why the gdb tests cannot run here, or None; `hangpy_init`: also the module's init file."""
    if not gdb_path():
        return "gdb is not installed; to get it: scripts/install-deps"
    if not os.path.exists("/proc/self/status"):
        return "no /proc"
    if hangpy_init is not None and not os.path.exists(hangpy_init):
        return "%s not built (gdb's Python headers missing?)" % hangpy_init
    return None


def setup(interpreter_name, hangpy_init):
    """What a gdb test under `interpreter_name` needs: (Interpreter, GdbOptions with its row's gdb
    settings, None), or (None, None, why the test must skip)."""
    problem = environment_problem()
    if problem:
        return None, None, problem
    if not os.path.exists(hangpy_init):
        return None, None, "%s not built (gdb's Python headers missing?)" % hangpy_init
    interpreter = interpreters.resolve(interpreter_name)
    if interpreter is None:
        return None, None, interpreters.not_installed(interpreter_name)
    settings = interpreters.INTERPRETERS[interpreter_name].gdb
    return interpreter, GdbOptions(hangpy_init=hangpy_init,
                                   hide_debug_info=settings["hide_debug_info"]), None
