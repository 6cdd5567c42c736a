"""The interpreters the tests run, by name: where each one lives, how to get it, and whether the
gdb tests run under it. This table is the only list of them: tests/integration/CMakeLists.txt
and tests/gdb/CMakeLists.txt read their test names from it at configure time
(`interpreters.py --names integration|gdb|chroot`).

Adding a version to the test suite is one line in INTERPRETERS. Names resolve when the test runs,
so a machine without that interpreter skips the test, saying how to get it, instead of failing.
"""
import argparse
import glob
import os
import re
import shutil
import sys

# Where scripts/make-debian-pythons builds its chroots (it reads the same HANGPY_CHROOTS).
CHROOTS = os.environ.get("HANGPY_CHROOTS", "/var/tmp/hangpy-chroots")
# Where a developer keeps local builds of CPython that no package provides (free-threaded ones,
# each under its version's prefix); never part of the repository.
LOCAL = os.environ.get("HANGPY_LOCAL_PYTHONS", "/var/tmp/ftbuild")


class Entry(object):
    """One row of the table.

    where: ("host", path or glob) | ("chroot", chroot directory name, path inside the chroot)
           | ("qemu", root directory name, path inside the root): another machine's interpreter
           run under qemu-user (qemu-aarch64-static -L root), its own group (aarch64)
    how_to_get: the command (or steps) that installs it, printed when a test skips for want of it
    gdb: None when the gdb tests do not run under it, else their options:
      hide_debug_info: run hangpy with gdb's debug-file-directory pointed away, proving it needs
                       no Python debug info (Debian's python3.11 is stripped; pyenv's builds
                       carry their debug info inside the binary, so there it cannot be hidden)
      libpython:       Debian's libpython.py (python3.11-dbg) is installed for it: compare
    """

    def __init__(self, where, how_to_get, gdb=None):
        self.where = where
        self.how_to_get = how_to_get
        self.gdb = gdb


def _pyenv(version):
    """A pyenv build of `version` (X.Y.Z), with the shared libpython the tests expect."""
    minor = ".".join(version.split(".")[:2])
    return Entry(("host", "~/.pyenv/versions/%s.*/bin/python%s" % (minor, minor)),
                 "PYTHON_CONFIGURE_OPTS=--enable-shared pyenv install %s" % version,
                 gdb={"hide_debug_info": False, "libpython": False})


def _chroot(suite, executable):
    return Entry(("chroot", suite, executable),
                 "scripts/test --matrix (builds the Debian chroots), or as root: "
                 "scripts/make-debian-pythons %s" % suite)


def _chroot_debug(suite, executable, package):
    """A Debian debug interpreter (--with-pydebug) in a chroot: its -dbg package."""
    return Entry(("chroot", suite, executable),
                 "scripts/test --matrix (builds the Debian chroots and installs %s in %s)"
                 % (package, suite))


def _free_threaded(version):
    """A free-threaded build of `version` (X.Y.Z) that no package provides."""
    minor = ".".join(version.split(".")[:2])
    return Entry(("host", "%s/%s.*t/bin/python%st" % (LOCAL, minor, minor)),
                 "a free-threaded CPython %s (v%s, configured with --disable-gil), installed "
                 "with its prefix in %s ($HANGPY_LOCAL_PYTHONS when set); no package has it"
                 % (minor, version, LOCAL),
                 gdb={"hide_debug_info": False, "libpython": False})


def _development(version):
    """CPython's development branch (`main`), newer than every table: read through its
    _Py_DebugOffsets."""
    minor = ".".join(version.split(".")[:2])
    return Entry(("host", "%s/%s.*/bin/python%s" % (LOCAL, minor, minor)),
                 "CPython %s (the development branch, %s), installed with its prefix in %s "
                 "($HANGPY_LOCAL_PYTHONS when set); no package has it" % (minor, version, LOCAL),
                 gdb={"hide_debug_info": False, "libpython": False})


def _standalone_shaped(version):
    """A CPython built the way python-build-standalone (uv's interpreters) builds it: one static
    executable (--disable-shared, exported symbols), extension modules linked in (_asyncio among
    them, Modules/Setup.local *static*), `strip --strip-all`."""
    minor = ".".join(version.split(".")[:2])
    return Entry(("host", "%s/%s.*-static/bin/python%s" % (LOCAL, minor, minor)),
                 "CPython %s (v%s) built as python-build-standalone builds it (--disable-shared, "
                 "_asyncio and other modules *static* in Modules/Setup.local, strip --strip-all), "
                 "installed with its prefix in %s/%s-static ($HANGPY_LOCAL_PYTHONS when set)"
                 % (minor, version, LOCAL, version),
                 gdb={"hide_debug_info": False, "libpython": False})


def _conda_shaped(version):
    """A CPython laid out as conda's: a static executable (the standalone-shaped one) in a prefix
    whose lib/ holds the shared libpython (unused by the executable) and the extension modules it
    loads from lib-dynload."""
    minor = ".".join(version.split(".")[:2])
    return Entry(("host", "%s/%s.*-conda/bin/python%s" % (LOCAL, minor, minor)),
                 "CPython %s (v%s) laid out as conda's: built --enable-shared into %s/%s-conda, "
                 "then bin/python%s replaced by the static executable of local-%s-static"
                 % (minor, version, LOCAL, version, minor, minor),
                 gdb={"hide_debug_info": False, "libpython": False})


def _pydebug(version):
    """A --with-pydebug build of `version` (shared libpython) that no package provides here."""
    minor = ".".join(version.split(".")[:2])
    return Entry(("host", "%s/%s.*d/bin/python%s" % (LOCAL, minor, minor)),
                 "CPython %s (v%s) configured --with-pydebug --enable-shared, installed with its "
                 "prefix in %s/%sd ($HANGPY_LOCAL_PYTHONS when set)" % (minor, version, LOCAL, version),
                 gdb={"hide_debug_info": False, "libpython": False})


def _emulated(root, executable):
    """An aarch64 Debian interpreter run under qemu-user-static on this x86-64 machine."""
    return Entry(("qemu", root, executable),
                 "scripts/test --aarch64 (installs qemu-user-static and builds the arm64 roots), or "
                 "as root: scripts/make-arm64-root")


# qemu-user's emulator for aarch64 programs (Debian's qemu-user-static).
QEMU_AARCH64 = "qemu-aarch64-static"


INTERPRETERS = {
    "debian-3.11": Entry(("host", "/usr/bin/python3.11"),  # static executable, no .symtab
                         "scripts/install-deps (Debian's python3.11 and python3.11-dbg)",
                         gdb={"hide_debug_info": True, "libpython": True}),
    "pyenv-2.7": _pyenv("2.7.18"),
    "pyenv-3.6": _pyenv("3.6.15"),
    "pyenv-3.7": _pyenv("3.7.16"),
    "pyenv-3.8": _pyenv("3.8.18"),
    "pyenv-3.9": _pyenv("3.9.18"),
    "pyenv-3.10": _pyenv("3.10.13"),
    "pyenv-3.11": _pyenv("3.11.7"),
    "pyenv-3.12": _pyenv("3.12.1"),
    "pyenv-3.13": _pyenv("3.13.0"),
    "bullseye-2.7": _chroot("bullseye", "/usr/bin/python2.7"),
    "bullseye-3.9": _chroot("bullseye", "/usr/bin/python3.9"),
    # Debug builds: 2.7's has Py_TRACE_REFS (every object header 16 bytes longer: the 2.7d
    # table), 3.9's not (read with the 3.9 table).
    "bullseye-2.7d": _chroot_debug("bullseye", "/usr/bin/python2.7-dbg", "python2.7-dbg"),
    "bullseye-3.9d": _chroot_debug("bullseye", "/usr/bin/python3.9-dbg", "python3.9-dbg"),
    "trixie-3.13": _chroot("trixie", "/usr/bin/python3.13"),
    "sid-3.14": _chroot("sid", "/usr/bin/python3.14"),
    "sid-3.15": _chroot("sid", "/usr/bin/python3.15"),
    "local-3.13t": _free_threaded("3.13.15"),
    "local-3.14t": _free_threaded("3.14.7"),
    "local-3.15t": _free_threaded("3.15.0rc1"),
    "local-3.16": _development("3.16.0a0"),
    "local-3.14-static": _standalone_shaped("3.14.7"),
    "local-3.14-conda": _conda_shaped("3.14.7"),
    "trixie-3.14-jit": Entry(("chroot", "trixie", "/opt/cpython-3.14.7-jit/bin/python3.14"),
                             "CPython 3.14 (v3.14.7) configured --enable-experimental-jit (which "
                             "needs LLVM 19: Debian 13's clang-19), installed in the trixie chroot "
                             "with the prefix /opt/cpython-3.14.7-jit"),
    "local-3.7d": _pydebug("3.7.17"),
    "local-3.10d": _pydebug("3.10.21"),
    # Debian 12's arm64 python3.11 (the same 3.11.2 as debian-3.11: its x86-64 twin).
    "arm64-3.11": _emulated("bookworm-arm64", "/usr/bin/python3.11"),
    # Debian 11's arm64 python3.9 (3.9.2, as bullseye-3.9): no native_thread_id, so its threads
    # are told by their pthread_t, which aarch64 keeps no register of.
    "arm64-3.9": _emulated("bullseye-arm64", "/usr/bin/python3.9"),
}


class Interpreter(object):
    """An interpreter executable, possibly inside a chroot (then `root` is that directory)."""

    def __init__(self, name, executable, root=None, emulator=None):
        self.name = name
        self.executable = executable  # as the process sees it (inside the chroot if any)
        self.root = root
        # qemu-user's emulator when the interpreter is another machine's. It runs with the root as
        # its -L prefix, not chrooted: the process sees this machine's files, except those the
        # root also has (its libraries, its /usr/lib/python3.x), so its paths are this machine's.
        self.emulator = emulator

    def host_path(self, guest_path):
        """Where a path the process sees lives on this machine."""
        if self.root is None:
            return guest_path
        return os.path.join(self.root, guest_path.lstrip("/"))

    def guest_path(self, host_path):
        """The path the process sees for a file of this machine inside its root."""
        if self.root is None or self.emulator:
            return host_path
        return "/" + os.path.relpath(host_path, self.root)

    def command(self, guest_cwd, args):
        """argv that runs the interpreter with `args` in `guest_cwd`, keeping the same pid."""
        if self.root is None:
            return [self.executable] + list(args)
        if self.emulator:
            return [self.emulator, "-L", self.root, "-0", self.executable,
                    self.host_path(self.executable)] + list(args)
        # The programs read /proc/self (their ground truth lists the process's kernel threads),
        # and the chroots keep no /proc mounted: it is mounted in a mount namespace of the
        # process's own, which goes away with it. unshare without --fork, chroot(8) and the
        # shells all exec, so the pid stays the one the caller waits on; the inner shell
        # changes to `guest_cwd` (chroot changes to "/").
        # glibc's sem_open (multiprocessing's locks) wants a tmpfs at /dev/shm, which the
        # chroots do not keep mounted either.
        in_namespace = ('root=$1; shift; mount -t proc proc "$root/proc" && '
                        '{ mount -t tmpfs -o size=64m tmpfs "$root/dev/shm" 2>/dev/null || true; } && '
                        'exec chroot "$root" /bin/sh -c \'cd "$1" && shift && exec "$@"\' sh "$@"')
        return ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", in_namespace,
                "sh", self.root, guest_cwd, self.executable] + list(args)

    def __repr__(self):
        where = " in " + self.root if self.root else ""
        return "%s (%s%s)" % (self.name, self.executable, where)


def _version_key(path):
    return [int(part) for part in re.findall(r"\d+", path)]


def resolve(name):
    """The Interpreter for a table name or an executable path; None when it is not installed."""
    if "/" in name:
        return Interpreter(name, name) if os.access(name, os.X_OK) else None
    if name not in INTERPRETERS:
        raise KeyError("unknown interpreter %r; known: %s" % (name, ", ".join(sorted(INTERPRETERS))))
    entry = INTERPRETERS[name].where
    if entry[0] == "host":
        matches = sorted(glob.glob(os.path.expanduser(entry[1])), key=_version_key)
        matches = [path for path in matches if os.access(path, os.X_OK)]
        return Interpreter(name, matches[-1]) if matches else None  # newest patch release
    root = os.path.join(CHROOTS, entry[1])
    emulator = None
    if entry[0] == "qemu":
        emulator = shutil.which(QEMU_AARCH64)
        if emulator is None:
            return None
    interpreter = Interpreter(name, entry[2], root, emulator)
    if not os.access(interpreter.host_path(entry[2]), os.X_OK):
        return None
    return interpreter


def not_installed(name):
    """The line a test prints when it skips for want of interpreter `name`: what is missing and
    how to get it."""
    entry = INTERPRETERS[name]
    where = entry.where[1] if entry.where[0] == "host" else "%s in %s" % (
        entry.where[2], os.path.join(CHROOTS, entry.where[1]))
    if entry.where[0] == "qemu" and shutil.which(QEMU_AARCH64) is None:
        where = QEMU_AARCH64
    return "interpreter %s is not installed (no %s); to get it: %s" % (name, where,
                                                                      entry.how_to_get)


def each_installed(names, results):
    """(name, Interpreter) for each of `names` that is installed; each other one is reported to
    `results` (a results.Results) as skipped, saying how to get it."""
    for name in names:
        interpreter = resolve(name)
        if interpreter is None:
            results.report("SKIP", name, [not_installed(name)])
        else:
            yield name, interpreter


def driver_arguments(doc):
    """The arguments every interpreter-matrix driver takes: --coreanalyze, and --interpreter to
    run only some of its interpreters (names of this table). `doc`: the driver's docstring."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--interpreter", action="append", help="only these (names of interpreters.py)")
    return parser.parse_args()


# Test groups (--names) -> which rows they hold.
GROUPS = {
    "integration": lambda entry: entry.where[0] != "qemu",
    "gdb": lambda entry: entry.gdb is not None,
    "chroot": lambda entry: entry.where[0] == "chroot",
    "aarch64": lambda entry: entry.where[0] == "qemu",
}


def names(group):
    """The names of GROUPS[group]'s rows, in the table's order."""
    return [name for name, entry in INTERPRETERS.items() if GROUPS[group](entry)]


def main():
    parser = argparse.ArgumentParser(description="Prints the interpreter names a test group "
                                     "runs, separated by ';' (a CMake list).")
    parser.add_argument("--names", choices=sorted(GROUPS), required=True)
    args = parser.parse_args()
    sys.stdout.write(";".join(names(args.names)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
