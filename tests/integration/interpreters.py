"""The interpreters the integration tests run, by name, and how to start one.

Adding a version to the test suite is one line in INTERPRETERS plus one name in
tests/integration/CMakeLists.txt. Names resolve when the test runs, so a machine without that
interpreter skips the test instead of failing it.
"""
import glob
import os
import re

# Where lab/make-debian-pythons.sh builds its chroots (it takes the same ROOT variable).
CHROOTS = os.environ.get("HANGPY_CHROOTS", "/var/tmp/hangpy-chroots")
# Where a developer keeps local builds of CPython that no package provides (free-threaded ones:
# `configure --disable-gil --prefix=$HANGPY_LOCAL_PYTHONS/3.13.15t`); never part of the repo.
LOCAL = os.environ.get("HANGPY_LOCAL_PYTHONS", "/var/tmp/ftbuild")


def _pyenv(minor):
    return ("host", "~/.pyenv/versions/%s.*/bin/python%s" % (minor, minor))


# name -> ("host", path or glob) | ("chroot", chroot directory name, path inside the chroot)
INTERPRETERS = {
    "debian-3.11": ("host", "/usr/bin/python3.11"),  # static executable, no .symtab
    "pyenv-2.7": _pyenv("2.7"),
    "pyenv-3.6": _pyenv("3.6"),
    "pyenv-3.7": _pyenv("3.7"),
    "pyenv-3.8": _pyenv("3.8"),
    "pyenv-3.9": _pyenv("3.9"),
    "pyenv-3.10": _pyenv("3.10"),
    "pyenv-3.11": _pyenv("3.11"),
    "pyenv-3.12": _pyenv("3.12"),
    "pyenv-3.13": _pyenv("3.13"),
    "bullseye-2.7": ("chroot", "bullseye", "/usr/bin/python2.7"),
    "bullseye-3.9": ("chroot", "bullseye", "/usr/bin/python3.9"),
    "trixie-3.13": ("chroot", "trixie", "/usr/bin/python3.13"),
    "sid-3.14": ("chroot", "sid", "/usr/bin/python3.14"),
    "sid-3.15": ("chroot", "sid", "/usr/bin/python3.15"),
    "local-3.13t": ("host", LOCAL + "/3.13.*t/bin/python3.13t"),
    "local-3.14t": ("host", LOCAL + "/3.14.*t/bin/python3.14t"),
}


class Interpreter(object):
    """An interpreter executable, possibly inside a chroot (then `root` is that directory)."""

    def __init__(self, name, executable, root=None):
        self.name = name
        self.executable = executable  # as the process sees it (inside the chroot if any)
        self.root = root

    def host_path(self, guest_path):
        """Where a path the process sees lives on this machine."""
        if self.root is None:
            return guest_path
        return os.path.join(self.root, guest_path.lstrip("/"))

    def guest_path(self, host_path):
        """The path the process sees for a file of this machine inside its root."""
        if self.root is None:
            return host_path
        return "/" + os.path.relpath(host_path, self.root)

    def command(self, guest_cwd, args):
        """argv that runs the interpreter with `args` in `guest_cwd`, keeping the same pid."""
        if self.root is None:
            return [self.executable] + list(args)
        # chroot(8) changes to "/"; a shell that execs keeps the pid the caller waits on.
        return ["chroot", self.root, "/bin/sh", "-c", 'cd "$1" && shift && exec "$@"', "sh",
                guest_cwd, self.executable] + list(args)

    def __repr__(self):
        where = " in " + self.root if self.root else ""
        return "%s (%s%s)" % (self.name, self.executable, where)


def _version_key(path):
    return [int(part) for part in re.findall(r"\d+", path)]


def resolve(name):
    """The Interpreter for a table name or an executable path; None when it is not installed."""
    if "/" in name:
        return Interpreter(name, name) if os.access(name, os.X_OK) else None
    entry = INTERPRETERS.get(name)
    if entry is None:
        raise KeyError("unknown interpreter %r; known: %s" % (name, ", ".join(sorted(INTERPRETERS))))
    if entry[0] == "host":
        matches = sorted(glob.glob(os.path.expanduser(entry[1])), key=_version_key)
        matches = [path for path in matches if os.access(path, os.X_OK)]
        return Interpreter(name, matches[-1]) if matches else None  # newest patch release
    root = os.path.join(CHROOTS, entry[1])
    interpreter = Interpreter(name, entry[2], root)
    if not os.access(interpreter.host_path(entry[2]), os.X_OK):
        return None
    return interpreter
