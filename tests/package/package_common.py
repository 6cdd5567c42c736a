#!/usr/bin/python3
"""What test_package.py's checks share: the paths, the throwaway chroots (Chroot), a chroot's
coreanalyze run from this machine (coreanalyze_wrapper) and its gdb (ChrootGdb)."""
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, os.path.join(REPO, "tests", "gdb"))
# The tests these checks reuse, for test_package.py and wheel_checks.py.
import gdb_session  # noqa: E402
import run_scenarios  # noqa: E402,F401
import test_corpus  # noqa: E402,F401
import test_example  # noqa: E402,F401
import test_gdb_snapshots  # noqa: E402,F401

CHROOTS = os.environ.get("HANGPY_PACKAGE_CHROOTS", "/var/tmp/hangpy-chroots/package")
# Debian 11's arm64 libc6 and libgcc-s1, where qemu runs the arm64 coreanalyze (scripts/package
# --arch arm64 makes it). Not /usr/aarch64-linux-gnu: once libc6:arm64 is installed (the arm64
# -dev packages bring it), that ld.so (libc6-arm64-cross) loads libc6:arm64's libc.so.6, another
# build of glibc, and a program that starts a thread spins for ever.
ARM64_GLIBC = os.environ.get("HANGPY_GLIBC_SYSROOT_ARM64",
                             "/var/tmp/hangpy-glibc-sysroot-arm64")
# Debian 12's arm64 root of scripts/make-arm64-root: its programs run by qemu through binfmt_misc.
ARM64_ROOT = os.path.join(os.environ.get("HANGPY_CHROOTS", "/var/tmp/hangpy-chroots"), "bookworm-arm64")
TIMEOUT = 600
# The example core of the README, which every path must read (py-bt shows this function).
EXAMPLE = os.path.join(REPO, "examples", "deadlock.core.zst")
EXAMPLE_FUNCTION = "_wait_for_tstate_lock"
MAN_PAGES = ("coreanalyze", "coreanalyze-collect", "coreanalyze-triage", "hangpy-gdb")


def run(argv, **kwargs):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=TIMEOUT, **kwargs)


class Chroot(object):
    """A throwaway copy of one of make-package-chroots' chroots, with /proc mounted in a mount
    namespace of each command's own (as the interpreter tests run the lab's chroots), and no
    network: what is installed must come from the copy's own apt cache."""

    def __init__(self, name, template=None, marker=".hangpy-package-chroot-done"):
        """`template`: another root to copy than make-package-chroots' `name` (the arm64 one of
        scripts/make-arm64-root), complete once it holds `marker`."""
        self.template = template or os.path.join(CHROOTS, name)
        self.marker = marker
        self.root = None

    def present(self):
        return os.path.isfile(os.path.join(self.template, self.marker))

    def __enter__(self):
        self.root = tempfile.mkdtemp(prefix="hangpy-package-", dir=os.path.dirname(self.template))
        subprocess.run(["cp", "-a", self.template + "/.", self.root], check=True, timeout=TIMEOUT)
        return self

    def __exit__(self, *exc):
        subprocess.run(["rm", "-rf", "--one-file-system", self.root], timeout=TIMEOUT)

    def host(self, guest_path):
        return os.path.join(self.root, guest_path.lstrip("/"))

    def guest(self, host_path):
        return "/" + os.path.relpath(host_path, self.root)

    def argv(self, args, mirrored=()):
        """`mirrored`: directories of this machine the command sees at the same paths (bound)."""
        binds = "".join('mkdir -p "$root"%s && mount --bind %s "$root"%s && ' % (
            shlex.quote(directory), shlex.quote(directory), shlex.quote(directory))
            for directory in mirrored)
        in_namespace = ('root=$1; shift; mount -t proc proc "$root/proc" && ' + binds +
                        'exec chroot "$root" '
                        '/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root '
                        'LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"')
        return ["unshare", "--mount", "--net", "--propagation", "private", "/bin/sh", "-c", in_namespace,
                "sh", self.root] + list(args)

    def run(self, args, mirrored=()):
        return run(self.argv(args, mirrored))


def coreanalyze_wrapper(chroot, coreanalyze, directory, mirrored=()):
    """A script on this machine that runs the chroot's coreanalyze, with the paths of files inside
    the chroot given as it sees them (run_scenarios passes this machine's paths); `mirrored`: as
    Chroot.argv's."""
    wrapper = os.path.join(directory, "coreanalyze-in-chroot")
    with open(wrapper, "w") as script:
        script.write('#!/bin/sh\nroot=%s\nfor a; do shift; case $a in "$root"/*) a=${a#"$root"};; '
                     'esac; set -- "$@" "$a"; done\nexec %s "$@"\n'
                     % (chroot.root, " ".join(shlex.quote(part)
                                              for part in chroot.argv([coreanalyze], mirrored))))
    os.chmod(wrapper, 0o755)
    return wrapper


class ChrootGdb(gdb_session.GdbOptions):
    """gdb_session's gdb command line, with the chroot's gdb and the tarball's Python init."""

    def __init__(self, chroot, init_file):
        gdb_session.GdbOptions.__init__(self)
        self.chroot = chroot
        self.init_file = init_file

    def argv(self):
        return self.chroot.argv([
            "gdb", "-batch", "-nx", "-iex", "set pagination off", "-iex", "set width 0",
            "-iex", "set print thread-events off", "-iex", "set auto-load python-scripts off",
            "-x", self.init_file, "-ex", "load hangpy"])

