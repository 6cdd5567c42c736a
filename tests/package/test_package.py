#!/usr/bin/python3
"""The release files of scripts/package, installed where users install them: Debian chroots of
scripts/make-package-chroots, each a throwaway copy so that the next run starts clean again.

  test_package.py --dist dist --version 0.1.0 CHECK

CHECK is one of:
tarball-bullseye, The tarball unpacked in a bare Debian 11 (glibc 2.31) or Ubuntu 16.04 (glibc
tarball-xenial    2.23), nothing else installed: its coreanalyze reads every snapshot of the
                  committed corpus (tests/corpus) and must match each one's ground truth as
                  integration.corpus does, JSON and text.
gdb-bullseye,     The tarball's gdb module in the gdb Debian 11 ships (gdb 10, Python 3.9), in
gdb-trixie,       Debian 13's (gdb 16, Python 3.13) and in Ubuntu 18.04's (gdb 8.1, Python 3.6):
gdb-bionic        `source .../share/hangpy/hangpy.py`, `load hangpy`, `thread apply all py-bt`
                  on one snapshot of each corpus interpreter, and `py-tasks` on the asyncio
                  ones, compared with their ground truth as gdb.snapshots does.
qemu-aarch64      The arm64 tarball (scripts/package --arch arm64) unpacked here, its coreanalyze
                  run through qemu-aarch64-static on Debian 11's arm64 glibc (the sysroot it was
                  linked against, scripts/make-glibc-sysroot --arch arm64: the same floor as the
                  x86-64 tarball's bullseye chroot): --version, the README's example core (its
                  ground truth, the deadlock line, its source lines under --sysroot, and the
                  same text and JSON as the x86-64 tarball's coreanalyze when dist/ holds it),
                  then every snapshot of the corpus against its ground truth. No root needed.
wheel-venvs       The wheel (hangpy-VERSION-py3-none-manylinux_2_17_x86_64.whl): its contents
                  (tag, RECORD's hashes, coreanalyze as a script of mode 755, the gdb module, the
                  man pages), then in a fresh venv of each of pyenv's 3.7, 3.8, 3.11 and 3.13 and
                  Debian's python3 (those installed here): `pip install --no-index` of the wheel,
                  the venv's bin/coreanalyze (the ELF program itself) --version and a corpus core
                  against its ground truth and its functions in the text, `python -m hangpy` (the
                  same output and exit status), `hangpy-gdb-init`'s line in `gdb -batch` (the
                  venv's module loaded, `help py-bt`, py-bt on the example core), `man -w` of
                  each page through the venv's PATH, and `pip uninstall -y hangpy` leaving no
                  file behind (the venv listed before and after). No root needed.
wheel-user        The same with Debian's python3 as an unprivileged user (hangpy-wheel-test,
                  made with useradd when absent; runuser), in a directory of its own whose path
                  has a space, the gdb line appended to that user's ~/.gdbinit as users do: every
                  file of the venv the user's. Root needed (runuser).
wheel-bullseye    The wheel on an older glibc: Debian 11's bare chroot (glibc 2.31) has no
                  python3 and gets none installed, so the wheel is unpacked with zipfile (the
                  modes it gives each file) and its coreanalyze run there (--version, a corpus
                  core against its ground truth, the same bytes as the tarball's); in the
                  bullseye-gdb chroot gdb 10 (Python 3.9) sources the wheel's init file, loads
                  the module and runs py-bt on a snapshot. pip in the chroot is reported SKIP.
deb-bookworm      The .deb in a clean Debian 12: `apt-get install gdb man-db bash-completion` (no
                  network: the chroot holds the downloaded packages), `dpkg -i hangpy_*.deb`, then
                  `coreanalyze --version` and a core, `gdb -batch -ex 'load hangpy'` with no init
                  line of ours (the package's /etc/gdb/gdbinit.d file), `man -l` of every page,
                  `complete -p coreanalyze` in an interactive bash, and `dpkg --purge` leaving
                  none of the package's files behind.

Exit status: 0 passed, 1 a failure, 77 the release files or the chroots are missing (ctest's
SKIP_RETURN_CODE): `scripts/test --package` makes both (qemu-aarch64: `scripts/install-deps
--arm64` and `scripts/package --arch arm64` make what it needs; wheel-venvs: no interpreter found).
"""
import argparse
import base64
import csv
import glob
import hashlib
import io
import json
import os
import pwd
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, os.path.join(REPO, "tests", "gdb"))
import gdb_session  # noqa: E402
import run_scenarios  # noqa: E402
import test_corpus  # noqa: E402
import test_example  # noqa: E402
import test_gdb_snapshots  # noqa: E402
from results import SKIP, Results  # noqa: E402

CHROOTS = os.environ.get("HANGPY_PACKAGE_CHROOTS", "/var/tmp/hangpy-chroots/package")
# Debian 11's arm64 libc6 and libgcc-s1, where qemu runs the arm64 coreanalyze (scripts/package
# --arch arm64 makes it). Not /usr/aarch64-linux-gnu: once libc6:arm64 is installed (the arm64
# -dev packages bring it), that ld.so (libc6-arm64-cross) loads libc6:arm64's libc.so.6, another
# build of glibc, and a program that starts a thread spins for ever.
ARM64_GLIBC = os.environ.get("HANGPY_GLIBC_SYSROOT_ARM64",
                             "/var/tmp/hangpy-glibc-sysroot-arm64")
TIMEOUT = 600
# The example core of the README, which every path must read (py-bt shows this function).
EXAMPLE = os.path.join(REPO, "examples", "deadlock.core.zst")
EXAMPLE_FUNCTION = "_wait_for_tstate_lock"
# The wheel's checks: the interpreters whose venvs install it (pyenv's, where installed, and
# Debian's), the corpus snapshot each venv's coreanalyze reads, the user of wheel-user.
PYENV = os.environ.get("HANGPY_PYENV_ROOT", "/root/.pyenv")
WHEEL_PYENV_VERSIONS = ("3.7", "3.8", "3.11", "3.13")
DEBIAN_PYTHON = "/usr/bin/python3"
WHEEL_SNAPSHOT = os.path.join(REPO, "tests", "corpus", "debian-3.11", "deadlock")
WHEEL_USER = "hangpy-wheel-test"
MAN_PAGES = ("coreanalyze", "coreanalyze-collect", "coreanalyze-triage", "hangpy-gdb")
# Where the wheel puts the gdb init file and the module, inside its `hangpy` package.
WHEEL_GDB_INIT = "hangpy/gdb/share/hangpy/hangpy.py"
WHEEL_MODULE_DIR = "hangpy/gdb/lib/hangpy/python/"


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

    def argv(self, args):
        in_namespace = ('root=$1; shift; mount -t proc proc "$root/proc" && exec chroot "$root" '
                        '/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root '
                        'LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"')
        return ["unshare", "--mount", "--net", "--propagation", "private", "/bin/sh", "-c", in_namespace,
                "sh", self.root] + list(args)

    def run(self, args):
        return run(self.argv(args))


def release_files(dist, version):
    """(tarball, deb) paths, either None when scripts/package has not made it."""
    tarball = os.path.join(dist, "hangpy-%s-x86_64.tar.gz" % version)
    debs = glob.glob(os.path.join(dist, "hangpy_%s-*_amd64.deb" % version))
    return (tarball if os.path.exists(tarball) else None), (debs[0] if debs else None)


def arm64_tarball(dist, version):
    """The arm64 tarball's path, None when scripts/package --arch arm64 has not made it."""
    tarball = os.path.join(dist, "hangpy-%s-aarch64.tar.gz" % version)
    return tarball if os.path.exists(tarball) else None


def unpack(tarball, chroot):
    """The tarball unpacked under /opt of the chroot; its top directory as the chroot sees it."""
    with tarfile.open(tarball) as archive:
        top = archive.getnames()[0].split("/")[0]
        archive.extractall(chroot.host("/opt"))
    return "/opt/" + top


def coreanalyze_wrapper(chroot, coreanalyze, directory):
    """A script on this machine that runs the chroot's coreanalyze, with the paths of files inside
    the chroot given as it sees them (run_scenarios passes this machine's paths)."""
    wrapper = os.path.join(directory, "coreanalyze-in-chroot")
    with open(wrapper, "w") as script:
        script.write('#!/bin/sh\nroot=%s\nfor a; do shift; case $a in "$root"/*) a=${a#"$root"};; '
                     'esac; set -- "$@" "$a"; done\nexec %s "$@"\n'
                     % (chroot.root, " ".join("'%s'" % part
                                              for part in chroot.argv([coreanalyze]))))
    os.chmod(wrapper, 0o755)
    return wrapper


def check_tarball(tarball, suite, results):
    chroot = Chroot(suite)
    if not chroot.present():
        return "no bare %s chroot in %s (scripts/make-package-chroots)" % (suite, CHROOTS)
    with chroot, tempfile.TemporaryDirectory() as scratch:
        top = unpack(tarball, chroot)
        coreanalyze = top + "/bin/coreanalyze"
        version = chroot.run([coreanalyze, "--version"])
        results.check(suite + "/--version", [] if version.returncode == 0 and
                      "Reads CPython" in version.stdout else
                      ["coreanalyze --version: exit %d, %r %r" % (version.returncode,
                                                                 version.stdout, version.stderr)])
        glibc = chroot.run(["/usr/bin/getconf", "GNU_LIBC_VERSION"]).stdout.strip()
        print("%s chroot: %s; %s" % (suite, glibc, version.stdout.splitlines()[0]
                                          if version.stdout else "no version"))
        wrapper = coreanalyze_wrapper(chroot, coreanalyze, scratch)
        workdir = chroot.host("/tmp/corpus")
        os.makedirs(workdir)
        entries = test_corpus.entries(os.path.join(REPO, "tests", "corpus"))
        for label, core, truth in entries:
            # Inside the chroot the host's /usr/lib/python3.* are absent: no source lines there.
            results.check(suite + "/" + label,
                          test_corpus.check_entry(wrapper, core, truth, workdir,
                                                  source_root=chroot.root))
    return None


def gdb_snapshots():
    """The corpus's deadlock snapshot of each x86-64 interpreter (the scenario every one has) and
    its asyncio_hang snapshots (py-tasks, 3.7 to 3.15). Not the aarch64 ones (arm64-*): a
    distribution's gdb reads its own machine's cores; gdb-multiarch reads those (gdb.snapshots)."""
    return [(label, core, truth)
            for label, core, truth in test_corpus.entries(os.path.join(REPO, "tests", "corpus"))
            if label.split("/")[1] in ("deadlock", "asyncio_hang")
            and not label.startswith("arm64-")]


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


def check_gdb(tarball, suite, results):
    chroot = Chroot(suite + "-gdb")
    if not chroot.present():
        return "no %s-gdb chroot in %s (scripts/make-package-chroots)" % (suite, CHROOTS)
    with chroot:
        top = unpack(tarball, chroot)
        versions = chroot.run(["gdb", "-nx", "-batch", "-ex", "show version", "-ex",
                               "python import sys; print('Python ' + sys.version.split()[0])"])
        print("%s: %s; %s" % (suite, versions.stdout.splitlines()[0] if versions.stdout else "?",
                              [line for line in versions.stdout.splitlines()
                               if line.startswith("Python")]))
        options = ChrootGdb(chroot, top + "/share/hangpy/hangpy.py")
        # The module must be the tarball's, found beside the init file.
        loaded = gdb_session.run_gdb(options, [], [
            ("file", 'python import sys; print(sys.modules["hangpy"].__file__)'),
            ("version", "hangpy version")])
        try:
            module_file = "\n".join(loaded.output("file"))
        except KeyError:
            module_file = ""
        results.check(suite + "/load hangpy", [] if module_file.startswith(
            top + "/lib/hangpy/python/") else ["load hangpy: module %r; gdb printed:\n%s"
                                              % (module_file, loaded.text[-2000:])])
        workdir = chroot.host("/tmp/corpus")
        os.makedirs(workdir)
        for label, compressed, truth_path in gdb_snapshots():
            with open(truth_path) as truth_file:
                truth = test_gdb_snapshots.with_main_thread_lwp(json.load(truth_file))
            core = run_scenarios.decompress(compressed, workdir)
            try:
                result = gdb_session.run_gdb(options, ["-c", chroot.guest(core)],
                                             test_gdb_snapshots.commands_for(truth))
                problems = test_gdb_snapshots.check_output(result, truth, chroot.guest(core))
            finally:
                os.remove(core)
            results.check("%s/%s" % (suite, label), problems)
    return None


def check_qemu_aarch64(tarball, x86_64_tarball, version, results):
    """The arm64 tarball's coreanalyze under qemu, unpacked here: what check_tarball does in a
    chroot, on Debian 11's arm64 glibc."""
    if not os.path.isfile(os.path.join(ARM64_GLIBC, "lib", "ld-linux-aarch64.so.1")):
        return ("no Debian 11 arm64 glibc in %s (scripts/make-glibc-sysroot --arch arm64)"
                % ARM64_GLIBC)
    with tempfile.TemporaryDirectory() as scratch:
        with tarfile.open(tarball) as archive:
            top = os.path.join(scratch, archive.getnames()[0].split("/")[0])
            archive.extractall(scratch)
        coreanalyze = os.path.join(top, "bin", "coreanalyze")
        with open(coreanalyze, "rb") as binary:
            header = binary.read(20)
        # e_machine 183: EM_AARCH64.
        results.check("qemu-aarch64/ELF", [] if header[:4] == b"\x7fELF" and
                      header[18:20] == (183).to_bytes(2, "little") else
                      ["%s is not an AArch64 ELF file: %r" % (coreanalyze, header)])
        # run_scenarios and test_corpus run one program: a script that runs it under qemu.
        wrapper = os.path.join(scratch, "coreanalyze-under-qemu")
        with open(wrapper, "w") as script:
            script.write('#!/bin/sh\nexec qemu-aarch64-static -L "%s" "%s" "$@"\n'
                         % (ARM64_GLIBC, coreanalyze))
        os.chmod(wrapper, 0o755)
        version_line = run([wrapper, "--version"])
        results.check("qemu-aarch64/--version", [] if version_line.returncode == 0 and
                      version_line.stdout.startswith("coreanalyze (hangpy) %s" % version) else
                      ["coreanalyze --version: exit %d, %r %r" % (
                          version_line.returncode, version_line.stdout, version_line.stderr)])
        # The example core as test_example reads it: ground truth, the deadlock, source lines.
        truth = os.path.join(REPO, "examples", "deadlock.truth.json")
        results.check("qemu-aarch64/example", test_corpus.check_entry(
            wrapper, EXAMPLE, truth, scratch))
        example = run_scenarios.decompress(EXAMPLE, scratch)
        text = run([wrapper, "--no-color", example])
        results.check("qemu-aarch64/example deadlock", [] if text.returncode == 0 and
                      "\ndeadlock: " in text.stdout and EXAMPLE_FUNCTION in text.stdout else
                      ["coreanalyze on the example core: exit %d, %s" % (text.returncode,
                                                                         text.stderr[-1000:])])
        results.check("qemu-aarch64/example source lines",
                      test_example.source_line_problems(wrapper, example, scratch))
        # The same bytes as the x86-64 coreanalyze, when its tarball is there (made from the same
        # sources: scripts/package and scripts/package --arch arm64 in one tree).
        if x86_64_tarball is None:
            results.report("SKIP", "qemu-aarch64/same as x86_64",
                           ["no x86-64 tarball in %s to compare with" % os.path.dirname(tarball)])
        else:
            native = os.path.join(scratch, "x86_64")
            with tarfile.open(x86_64_tarball) as archive:
                native_top = os.path.join(native, archive.getnames()[0].split("/")[0])
                archive.extractall(native)
            native_coreanalyze = os.path.join(native_top, "bin", "coreanalyze")
            problems = []
            for options in (["--no-color"], ["--json"]):
                arm64 = run([wrapper] + options + [example])
                x86_64 = run([native_coreanalyze] + options + [example])
                if (arm64.returncode, arm64.stdout) != (x86_64.returncode, x86_64.stdout):
                    problems.append("coreanalyze %s: arm64 exit %d, x86-64 exit %d; arm64 printed:"
                                    "\n%s\nx86-64 printed:\n%s" % (
                                        " ".join(options), arm64.returncode, x86_64.returncode,
                                        arm64.stdout[-1500:], x86_64.stdout[-1500:]))
            results.check("qemu-aarch64/same as x86_64", problems)
        os.remove(example)
        workdir = os.path.join(scratch, "corpus")
        os.makedirs(workdir)
        for label, core, truth in test_corpus.entries(os.path.join(REPO, "tests", "corpus")):
            results.check("qemu-aarch64/" + label,
                          test_corpus.check_entry(wrapper, core, truth, workdir))
    return None


def check_deb(deb, version, results, suite="bookworm", chroot=None, gdb_core=EXAMPLE):
    """The .deb installed with dpkg -i in `chroot` (make-package-chroots' bookworm unless given):
    coreanalyze, `load hangpy` in the system's gdb on `gdb_core`, man pages, completion, purge.
    `suite` names the checks."""
    chroot = chroot or Chroot("bookworm")
    if not chroot.present():
        return "no %s chroot in %s (scripts/make-package-chroots)" % (suite, chroot.template)
    with chroot:
        shutil.copy(deb, chroot.host("/tmp/"))
        guest_deb = "/tmp/" + os.path.basename(deb)
        # Offline (no network in the namespace): the chroot's cache holds gdb and the rest. Then
        # the package with dpkg -i, as the users do (its Depends came with gdb).
        install = chroot.run(["apt-get", "install", "-y", "gdb", "man-db", "bash-completion"])
        problems = [] if install.returncode == 0 else [
            "apt-get install exited %d: %s" % (install.returncode, install.stderr[-2000:])]
        if not problems:
            install = chroot.run(["dpkg", "-i", guest_deb])
            if install.returncode != 0:
                problems.append("dpkg -i exited %d: %s" % (install.returncode,
                                                          install.stderr[-2000:]))
        results.check(suite + "/dpkg -i", problems)
        if problems:
            return None
        files = chroot.run(["dpkg", "-L", "hangpy"]).stdout.split()
        version_line = chroot.run(["coreanalyze", "--version"])
        results.check(suite + "/coreanalyze --version", [] if version_line.returncode == 0 and
                      version_line.stdout.startswith("coreanalyze (hangpy) %s" % version) else
                      ["coreanalyze --version: %r %r" % (version_line.stdout,
                                                         version_line.stderr)])
        example = run_scenarios.decompress(EXAMPLE, chroot.host("/tmp"))
        text = chroot.run(["coreanalyze", "--no-color", chroot.guest(example)])
        results.check(suite + "/coreanalyze core", [] if text.returncode == 0 and
                      EXAMPLE_FUNCTION in text.stdout else
                      ["coreanalyze on the example core: exit %d, %s" % (text.returncode,
                                                                         text.stderr[-1000:])])
        # No -nx: the package's /etc/gdb/gdbinit.d/hangpy.gdb must provide `load hangpy`.
        gdb_example = example if gdb_core == EXAMPLE else run_scenarios.decompress(gdb_core, chroot.host("/tmp"))
        gdb = chroot.run(["gdb", "-batch", "-ex", "load hangpy", "-ex", "hangpy version",
                          "-ex", "py-bt", "-c", chroot.guest(gdb_example)])
        results.check(suite + "/gdb load hangpy", [] if gdb.returncode == 0 and
                      ("hangpy %s: reads CPython" % version) in gdb.stdout and
                      EXAMPLE_FUNCTION in gdb.stdout else
                      ["gdb -batch -ex 'load hangpy': exit %d\n%s\n%s" % (
                          gdb.returncode, gdb.stdout[-2000:], gdb.stderr[-2000:])])
        pages = [path for path in files if "/man/man1/" in path and path.endswith(".1.gz")]
        page_problems = [] if len(pages) == 4 else ["man pages in the package: %s" % pages]
        for page in pages:
            rendered = chroot.run(["man", "--warnings", "-l", page])
            if rendered.returncode != 0 or rendered.stderr.strip() or "hangpy" not in rendered.stdout:
                page_problems.append("man -l %s: exit %d, %s" % (page, rendered.returncode,
                                                                rendered.stderr.strip()[:500]))
        results.check(suite + "/man -l", page_problems)
        # An interactive bash as a user's ~/.bashrc from Debian's /etc/skel sets it up (root's
        # own .bashrc does not load bash-completion); the completion loads on the first Tab.
        completion = chroot.run(["bash", "--rcfile", "/etc/skel/.bashrc", "-ic",
                                 "complete -p coreanalyze 2>/dev/null || "
                                 "{ _completion_loader coreanalyze; complete -p coreanalyze; }"])
        results.check(suite + "/completion", [] if "coreanalyze" in completion.stdout and
                      "-F" in completion.stdout else
                      ["complete -p coreanalyze: %r %r" % (completion.stdout,
                                                           completion.stderr[-500:])])
        purge = chroot.run(["dpkg", "--purge", "hangpy"])
        left = [path for path in files if os.path.isfile(chroot.host(path))]
        results.check(suite + "/dpkg --purge", [] if purge.returncode == 0 and not left else
                      ["dpkg --purge: exit %d, files left: %s %s" % (purge.returncode, left,
                                                                      purge.stderr[-500:])])
    return None


def wheel_file(dist, version, machine="x86_64"):
    """The wheel's path, None when scripts/package has not made it."""
    wheel = os.path.join(dist, "hangpy-%s-py3-none-manylinux_2_17_%s.whl" % (version, machine))
    return wheel if os.path.exists(wheel) else None


def record_hash(content):
    return "sha256=" + base64.urlsafe_b64encode(
        hashlib.sha256(content).digest()).rstrip(b"=").decode("ascii")


def wheel_contents_problems(wheel, version, machine="x86_64"):
    """What the wheel must hold, as pip reads it: the tag, RECORD (every file with its hash),
    coreanalyze in the scripts (an ELF program, mode 755), the gdb module and its init, the man
    pages, the console command."""
    problems = []
    data = "hangpy-%s.data/" % version
    dist_info = "hangpy-%s.dist-info/" % version
    with zipfile.ZipFile(wheel) as archive:
        infos = dict((info.filename, info) for info in archive.infolist())
        expected = ([data + "scripts/coreanalyze", WHEEL_GDB_INIT,
                     WHEEL_MODULE_DIR + "hangpy.abi3.so",
                     data + "data/share/bash-completion/completions/coreanalyze"]
                    + [data + "data/share/man/man1/%s.1.gz" % page for page in MAN_PAGES]
                    + ["hangpy/%s.py" % module
                       for module in ("__init__", "__main__", "_version", "gdb_init")]
                    + [dist_info + name for name in ("METADATA", "WHEEL", "RECORD",
                                                     "entry_points.txt", "licenses/copyright")])
        problems += ["%s is not in the wheel" % name for name in expected if name not in infos]
        problems += ["%s: compiled Python in the wheel" % name for name in infos
                     if "__pycache__" in name or name.endswith(".pyc")]
        if problems:
            return problems
        wheel_text = archive.read(dist_info + "WHEEL").decode()
        for line in ("Tag: py3-none-manylinux_2_17_%s" % machine, "Root-Is-Purelib: false"):
            if line not in wheel_text.splitlines():
                problems.append("WHEEL lacks %r:\n%s" % (line, wheel_text))
        metadata = archive.read(dist_info + "METADATA").decode()
        if "\nVersion: %s\n" % version not in metadata:
            problems.append("METADATA does not say Version: %s" % version)
        entry_points = archive.read(dist_info + "entry_points.txt").decode()
        if "hangpy-gdb-init = hangpy.gdb_init:main" not in entry_points:
            problems.append("no hangpy-gdb-init console command: %r" % entry_points)
        script = infos[data + "scripts/coreanalyze"]
        if (script.external_attr >> 16) & 0o777 != 0o755:
            problems.append("scripts/coreanalyze has mode %o, not 755"
                            % ((script.external_attr >> 16) & 0o777))
        if archive.read(script)[:4] != b"\x7fELF":
            problems.append("scripts/coreanalyze is not an ELF program")
        record = list(csv.reader(io.StringIO(archive.read(dist_info + "RECORD").decode())))
        recorded = dict((row[0], row[1:]) for row in record if row)
        for name in infos:
            if name.endswith("/"):
                continue
            if name not in recorded:
                problems.append("%s is not in RECORD" % name)
            elif name != dist_info + "RECORD":
                content = archive.read(name)
                if recorded[name] != [record_hash(content), str(len(content))]:
                    problems.append("RECORD's hash or size of %s is wrong" % name)
        problems += ["RECORD names %s, which the wheel lacks" % name for name in recorded
                     if name not in infos]
    return problems


def wheel_pythons():
    """[(label, interpreter or None, why not)]: the newest pyenv build of each version of
    WHEEL_PYENV_VERSIONS, then Debian's python3."""
    found = []
    for minor in WHEEL_PYENV_VERSIONS:
        builds = glob.glob(os.path.join(PYENV, "versions", minor + ".*", "bin", "python3"))
        builds.sort(key=lambda path: [int(part) for part in
                                      path.split(os.sep)[-3].split(".") if part.isdigit()])
        if builds:
            found.append(("pyenv-" + builds[-1].split(os.sep)[-3], builds[-1], None))
        else:
            found.append(("pyenv-" + minor, None, "no pyenv Python %s in %s" % (minor, PYENV)))
    if os.path.exists(DEBIAN_PYTHON):
        found.append(("debian-python3", DEBIAN_PYTHON, None))
    else:
        found.append(("debian-python3", None, "no %s" % DEBIAN_PYTHON))
    return found


class Runner(object):
    """Runs a venv check's commands with a clean environment (HOME in the scratch directory:
    pip's cache and gdb's ~/.gdbinit there), as root or, with `user`, as that user (runuser)."""

    def __init__(self, home, cwd, user=None):
        self.home = home
        self.cwd = cwd
        self.user = user

    def __call__(self, argv, path="/usr/bin:/bin"):
        environment = {"PATH": path, "HOME": self.home, "LC_ALL": "C.UTF-8",
                       "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
                       "PIP_CONFIG_FILE": os.devnull}
        argv = ["env", "-i"] + ["%s=%s" % item for item in sorted(environment.items())] + argv
        if self.user:
            argv = ["runuser", "-u", self.user, "--"] + argv
        return run(argv, cwd=self.cwd)


def tree(directory):
    """Every path under `directory`, relative; directories end with /."""
    found = set()
    for root, dirs, files in os.walk(directory):
        relative = os.path.relpath(root, directory)
        for name in dirs:
            found.add(os.path.normpath(os.path.join(relative, name)) + "/")
        for name in files:
            found.add(os.path.normpath(os.path.join(relative, name)))
    return found


def failed(what, result):
    return ["%s: exit %d\n%s\n%s" % (what, result.returncode, result.stdout[-2000:],
                                      result.stderr[-2000:])]


def snapshot_text_problems(text, truth_path):
    """The text of coreanalyze on WHEEL_SNAPSHOT must name each thread and the function each one
    is in (innermost frame, from the ground truth), and the deadlock."""
    with open(truth_path) as stream:
        truth = json.load(stream)
    wanted = ["Process %d " % truth["pid"], "\ndeadlock: "]
    for thread in truth["threads"].values():
        wanted.append('"%s"' % thread["name"])
        wanted.append(", in %s\n" % thread["qualnames"][-1])
    missing = [string for string in wanted if string not in text]
    return ["%r not in coreanalyze's text:\n%s" % (missing, text[-3000:])] if missing else []


def check_venv(label, python, wheel, version, scratch, runner, results, home_gdbinit=False):
    """Installs the wheel (a copy in `scratch`) into a fresh venv of `python` in `scratch`,
    checks what it gives, uninstalls it. `home_gdbinit`: the gdb line goes into the runner's
    ~/.gdbinit (read by gdb without -nx) instead of an -ex of a gdb with -nx."""
    venv = os.path.join(scratch, "venv")
    bin_dir = os.path.join(venv, "bin")
    made = runner([python, "-m", "venv", venv])
    results.check(label + "/python -m venv", [] if made.returncode == 0 and os.path.isfile(
        os.path.join(bin_dir, "python")) else failed("python -m venv", made))
    if made.returncode != 0:
        return
    python_version = runner([os.path.join(bin_dir, "python"), "-c", "import sys, pip; "
                             "print(sys.version.split()[0], 'pip', pip.__version__)"])
    print("%s: Python %s" % (label, python_version.stdout.strip()))
    before = tree(venv)
    install = runner([os.path.join(bin_dir, "python"), "-m", "pip", "install", "--no-index",
                      wheel])
    results.check(label + "/pip install", [] if install.returncode == 0 and
                  ("Successfully installed hangpy-%s" % version) in install.stdout else
                  failed("pip install --no-index " + os.path.basename(wheel), install))
    if install.returncode != 0:
        return

    # coreanalyze: the ELF program itself in the venv's bin/ (the wheel's scripts), no wrapper.
    coreanalyze = os.path.join(bin_dir, "coreanalyze")
    core = os.path.join(scratch, os.path.basename(WHEEL_SNAPSHOT) + ".core")
    problems = []
    if not os.path.isfile(coreanalyze):
        problems.append("no %s" % coreanalyze)
    else:
        with open(coreanalyze, "rb") as program:
            if program.read(4) != b"\x7fELF":
                problems.append("%s is not the ELF program" % coreanalyze)
        version_line = runner([coreanalyze, "--version"])
        if version_line.returncode != 0 or not version_line.stdout.startswith(
                "coreanalyze (hangpy) %s\n" % version):
            problems += failed("coreanalyze --version", version_line)
    results.check(label + "/coreanalyze --version", problems)
    if not problems:
        check_venv_coreanalyze(label, bin_dir, core, version, scratch, runner, results)
    check_venv_gdb_man_uninstall(label, venv, before, version, scratch, runner, results,
                                 home_gdbinit)


def check_venv_coreanalyze(label, bin_dir, core, version, scratch, runner, results):
    """The venv's coreanalyze on WHEEL_SNAPSHOT, and `python -m hangpy` giving the same."""
    coreanalyze = os.path.join(bin_dir, "coreanalyze")
    text = runner([coreanalyze, "--no-color", core])
    problems = failed("coreanalyze " + core, text) if text.returncode != 0 else \
        snapshot_text_problems(text.stdout, WHEEL_SNAPSHOT + ".truth.json")
    if runner.user is None:
        # The whole ground truth, as integration.corpus compares it (JSON and text), in a
        # directory of its own (it decompresses the snapshot there, then removes it).
        workdir = tempfile.mkdtemp(dir=scratch)
        problems += test_corpus.check_entry(coreanalyze, WHEEL_SNAPSHOT + ".core.zst",
                                            WHEEL_SNAPSHOT + ".truth.json", workdir)
        os.rmdir(workdir)
    results.check(label + "/coreanalyze " + os.path.relpath(WHEEL_SNAPSHOT, REPO), problems)

    # python -m hangpy: the same program, its output and exit status.
    venv_python = os.path.join(bin_dir, "python")
    problems = []
    module_version = runner([venv_python, "-m", "hangpy", "--version"])
    if module_version.returncode != 0 or not module_version.stdout.startswith(
            "coreanalyze (hangpy) %s\n" % version):
        problems += failed("python -m hangpy --version", module_version)
    module_text = runner([venv_python, "-m", "hangpy", "--no-color", core])
    if (module_text.returncode, module_text.stdout) != (text.returncode, text.stdout):
        problems += failed("python -m hangpy --no-color CORE (not coreanalyze's output)",
                           module_text)
    direct_bad = runner([coreanalyze, "--no-such-option"])
    module_bad = runner([venv_python, "-m", "hangpy", "--no-such-option"])
    if direct_bad.returncode == 0 or (module_bad.returncode, module_bad.stderr) != (
            direct_bad.returncode, direct_bad.stderr):
        problems.append("python -m hangpy --no-such-option: exit %d %r; coreanalyze: exit %d %r"
                        % (module_bad.returncode, module_bad.stderr, direct_bad.returncode,
                           direct_bad.stderr))
    results.check(label + "/python -m hangpy", problems)


def check_venv_gdb_man_uninstall(label, venv, before, version, scratch, runner, results,
                                 home_gdbinit):
    """hangpy-gdb-init's line in gdb, the man pages, then pip uninstall against `before`, the
    venv's listing before the install."""
    bin_dir = os.path.join(venv, "bin")
    venv_python = os.path.join(bin_dir, "python")
    # hangpy-gdb-init: one line, the init file of the venv's package, which gdb sources.
    init = runner([os.path.join(bin_dir, "hangpy-gdb-init")])
    line = init.stdout.rstrip("\n")
    init_file = line[len("source "):]
    problems = [] if (init.returncode == 0 and "\n" not in line and line.startswith("source ")
                      and init_file.startswith(venv + "/") and init_file.endswith(
                          "/" + WHEEL_GDB_INIT) and os.path.isfile(init_file)) else \
        failed("hangpy-gdb-init (wants one line: source VENV/.../%s)" % WHEEL_GDB_INIT, init)
    results.check(label + "/hangpy-gdb-init", problems)
    if shutil.which("gdb") is None:
        results.report("SKIP", label + "/gdb", ["gdb is not installed (scripts/install-deps)"])
    elif not problems:
        example = run_scenarios.decompress(EXAMPLE, scratch)
        if home_gdbinit:  # `hangpy-gdb-init >> ~/.gdbinit`
            with open(os.path.join(runner.home, ".gdbinit"), "a") as gdbinit:
                gdbinit.write(init.stdout)
            if runner.user:
                shutil.chown(os.path.join(runner.home, ".gdbinit"), runner.user)
            start = ["gdb", "-batch"]
        else:  # gdb -ex "$(hangpy-gdb-init)"
            start = ["gdb", "-batch", "-nx", "-ex", line]
        gdb = runner(start + [
            "-ex", "load hangpy", "-ex", "hangpy version", "-ex",
            'python import sys; print("module " + sys.modules["hangpy"].__file__)',
            "-ex", "help py-bt", "-ex", "py-bt", "-c", example])
        module_dir = os.path.join(os.path.dirname(init_file), "..", "..", "lib", "hangpy",
                                  "python")
        wanted = ["hangpy %s: reads CPython" % version,
                  "module " + os.path.normpath(module_dir) + "/hangpy",
                  "Print the Python stack of the selected thread", EXAMPLE_FUNCTION]
        missing = [string for string in wanted if string not in gdb.stdout]
        results.check(label + "/gdb " + ("~/.gdbinit" if home_gdbinit else "-ex"), [] if (
            gdb.returncode == 0 and not missing) else
            ["missing %r" % missing] + failed("gdb " + " ".join(start[1:]), gdb))
        os.remove(example)

    # The man pages, found by man through the venv's bin/ on PATH (man-db's manpath).
    if shutil.which("man") is None:
        results.report("SKIP", label + "/man", ["man is not installed (scripts/install-deps)"])
    else:
        found = runner(["man", "-w"] + list(MAN_PAGES), path=bin_dir + ":/usr/bin:/bin")
        wanted = ["%s/share/man/man1/%s.1.gz" % (venv, page) for page in MAN_PAGES]
        problems = [] if found.stdout.splitlines() == wanted else [
            "man -w %s: %r, not %r (%s)" % (" ".join(MAN_PAGES), found.stdout.splitlines(), wanted,
                                           found.stderr.strip())]
        for page in wanted:
            rendered = runner(["man", "--warnings", "-l", page])
            if rendered.returncode != 0 or rendered.stderr.strip() or \
                    "hangpy" not in rendered.stdout:
                problems += failed("man -l " + page, rendered)
        results.check(label + "/man", problems)

    # pip uninstall: no file of hangpy left (the venv listed before the install and after).
    uninstall = runner([venv_python, "-m", "pip", "uninstall", "-y", "hangpy"])
    after = tree(venv)
    added = sorted(after - before)
    problems = [] if uninstall.returncode == 0 and (
        "Successfully uninstalled hangpy-%s" % version) in uninstall.stdout else failed(
            "pip uninstall -y hangpy", uninstall)
    files_left = [path for path in added if not path.endswith("/")]
    if files_left:
        problems.append("left in the venv: %s" % files_left)
    problems += ["removed from the venv: %s" % path for path in sorted(before - after)]
    results.check(label + "/pip uninstall", problems)
    if added and not files_left:
        # pip removes the files it installed and their own directories, not the parents it made.
        print("     (%s: pip leaves the empty directories it made: %s)" % (label, ", ".join(added)))


def venv_scratch(scratch, wheel, user=None):
    """Copies into `scratch` what check_venv reads: the wheel, the snapshot (decompressed); a
    home directory; all of it the user's."""
    shutil.copy(wheel, scratch)
    run_scenarios.decompress(WHEEL_SNAPSHOT + ".core.zst", scratch)
    os.mkdir(os.path.join(scratch, "home"))
    if user:
        for root, dirs, files in os.walk(scratch):
            for name in [root] + [os.path.join(root, entry) for entry in dirs + files]:
                shutil.chown(name, user)
    return os.path.join(scratch, os.path.basename(wheel))


def check_wheel_venvs(wheel, version, results):
    results.check("wheel contents", wheel_contents_problems(wheel, version))
    for label, python, why_not in wheel_pythons():
        if python is None:
            results.report("SKIP", label, [why_not])
            continue
        with tempfile.TemporaryDirectory(prefix="hangpy-wheel-") as scratch:
            copy = venv_scratch(scratch, wheel)
            check_venv(label, python, copy, version, scratch,
                       Runner(os.path.join(scratch, "home"), scratch), results)
    return None


def check_wheel_user(wheel, version, results):
    if shutil.which("runuser") is None:
        return "runuser is not installed (util-linux)"
    if not os.path.exists(DEBIAN_PYTHON):
        return "no %s" % DEBIAN_PYTHON
    try:
        pwd.getpwnam(WHEEL_USER)
    except KeyError:
        made = run(["useradd", "--create-home", "--shell", "/bin/sh", WHEEL_USER])
        if made.returncode != 0:
            return "useradd %s: %s" % (WHEEL_USER, made.stderr.strip())
        print("made the user %s (useradd)" % WHEEL_USER)
    user = pwd.getpwnam(WHEEL_USER)
    outer = tempfile.mkdtemp(prefix="hangpy-wheel-user-")
    try:
        # A directory of the user's, whose path has a space (the gdb line, pip's scripts).
        scratch = os.path.join(outer, "wheel test")
        os.mkdir(scratch)
        os.chmod(outer, 0o755)
        copy = venv_scratch(scratch, wheel, WHEEL_USER)
        label = "user %s/debian-python3" % WHEEL_USER
        check_venv(label, DEBIAN_PYTHON, copy, version, scratch,
                   Runner(os.path.join(scratch, "home"), scratch, WHEEL_USER), results,
                   home_gdbinit=True)
        # What pip wrote, the user wrote: nothing of root's in the venv.
        others = []
        for root, dirs, files in os.walk(os.path.join(scratch, "venv")):
            for name in dirs + files:
                if os.lstat(os.path.join(root, name)).st_uid != user.pw_uid:
                    others.append(os.path.join(root, name))
        results.check(label + "/owner", ["not the user's: %s" % others[:20]] if others else [])
    finally:
        shutil.rmtree(outer)
    return None


def unpack_wheel(wheel, directory):
    """The wheel unpacked as it is (zipfile: where no pip is), each file with the mode the wheel
    gives it, as installers do."""
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            path = archive.extract(info, directory)
            mode = (info.external_attr >> 16) & 0o777
            if mode and not info.filename.endswith("/"):
                os.chmod(path, mode)


def tarball_member(tarball, suffix):
    """The bytes of the tarball's file whose path ends with `suffix`."""
    with tarfile.open(tarball) as archive:
        for member in archive.getmembers():
            if member.name.endswith(suffix):
                return archive.extractfile(member).read()
    return None


def check_wheel_bullseye(wheel, tarball, version, results):
    chroot = Chroot("bullseye")
    if not chroot.present():
        return "no bare bullseye chroot in %s (scripts/make-package-chroots)" % CHROOTS
    top = "/opt/hangpy-wheel"
    coreanalyze = "%s/hangpy-%s.data/scripts/coreanalyze" % (top, version)
    with chroot, tempfile.TemporaryDirectory() as scratch:
        glibc = chroot.run(["/usr/bin/getconf", "GNU_LIBC_VERSION"]).stdout.strip()
        pythons = [path for path in ("/usr/bin/python3", "/usr/bin/python3.9")
                   if os.path.exists(chroot.host(path))]
        results.report("SKIP", "bullseye/pip install", [
            "the bare bullseye chroot (%s) has %s, and nothing is installed into it: the wheel is "
            "unpacked there with zipfile instead, its files run as they are"
            % (glibc, ("only " + ", ".join(pythons) + " without venv checks here") if pythons
               else "no python3")])
        unpack_wheel(wheel, chroot.host(top))
        version_line = chroot.run([coreanalyze, "--version"])
        print("bullseye chroot: %s; the wheel's %s" % (glibc, version_line.stdout.split("\n")[0]))
        results.check("bullseye/coreanalyze --version", [] if version_line.returncode == 0 and
                      version_line.stdout.startswith("coreanalyze (hangpy) %s\n" % version)
                      else failed("coreanalyze --version in bullseye", version_line))
        wrapper = coreanalyze_wrapper(chroot, coreanalyze, scratch)
        workdir = chroot.host("/tmp/corpus")
        os.makedirs(workdir)
        core = run_scenarios.decompress(WHEEL_SNAPSHOT + ".core.zst", workdir)
        text = chroot.run([coreanalyze, "--no-color", chroot.guest(core)])
        problems = failed("coreanalyze in bullseye", text) if text.returncode != 0 else \
            snapshot_text_problems(text.stdout, WHEEL_SNAPSHOT + ".truth.json")
        os.remove(core)
        problems += test_corpus.check_entry(wrapper, WHEEL_SNAPSHOT + ".core.zst",
                                            WHEEL_SNAPSHOT + ".truth.json", workdir,
                                            source_root=chroot.root)
        results.check("bullseye/coreanalyze " + os.path.relpath(WHEEL_SNAPSHOT, REPO), problems)
        # The same programs as the tarball's, which tarball-bullseye and gdb-* test in full.
        if tarball is None:
            results.report("SKIP", "bullseye/same as the tarball", ["no tarball to compare with"])
        else:
            problems = []
            for in_wheel, in_tarball in ((coreanalyze, "/bin/coreanalyze"),
                                         (top + "/" + WHEEL_MODULE_DIR + "hangpy.abi3.so",
                                          "/lib/hangpy/python/hangpy.abi3.so")):
                with open(chroot.host(in_wheel), "rb") as stream:
                    if stream.read() != tarball_member(tarball, in_tarball):
                        problems.append("%s differs from the tarball's %s" % (in_wheel,
                                                                             in_tarball))
            results.check("bullseye/same as the tarball", problems)

    # The gdb module: Debian 11's gdb 10 (Python 3.9) sources the wheel's init file.
    chroot = Chroot("bullseye-gdb")
    if not chroot.present():
        results.report("SKIP", "bullseye-gdb", ["no bullseye-gdb chroot in %s "
                                                "(scripts/make-package-chroots)" % CHROOTS])
        return None
    with chroot:
        unpack_wheel(wheel, chroot.host(top))
        versions = chroot.run(["gdb", "-nx", "-batch", "-ex", "show version", "-ex",
                               "python import sys; print('Python ' + sys.version.split()[0])"])
        print("bullseye-gdb: %s; %s" % (versions.stdout.splitlines()[0] if versions.stdout else "?",
                                        versions.stdout.splitlines()[-1:]))
        options = ChrootGdb(chroot, top + "/" + WHEEL_GDB_INIT)
        loaded = gdb_session.run_gdb(options, [], [
            ("file", 'python import sys; print(sys.modules["hangpy"].__file__)'),
            ("version", "hangpy version"), ("help", "help py-bt")])
        try:
            module_file = "\n".join(loaded.output("file"))
            help_text = "\n".join(loaded.output("help") + loaded.output("version"))
        except KeyError:
            module_file = help_text = ""
        results.check("bullseye-gdb/load hangpy", [] if module_file.startswith(
            top + "/" + WHEEL_MODULE_DIR) and "Print the Python stack" in help_text and
            ("hangpy %s: reads CPython" % version) in help_text else
            ["load hangpy: module %r; gdb printed:\n%s" % (module_file, loaded.text[-2000:])])
        workdir = chroot.host("/tmp/corpus")
        os.makedirs(workdir)
        label = os.path.relpath(WHEEL_SNAPSHOT, os.path.join(REPO, "tests", "corpus"))
        with open(WHEEL_SNAPSHOT + ".truth.json") as truth_file:
            truth = test_gdb_snapshots.with_main_thread_lwp(json.load(truth_file))
        core = run_scenarios.decompress(WHEEL_SNAPSHOT + ".core.zst", workdir)
        result = gdb_session.run_gdb(options, ["-c", chroot.guest(core)],
                                     test_gdb_snapshots.commands_for(truth))
        results.check("bullseye-gdb/" + label,
                      test_gdb_snapshots.check_output(result, truth, chroot.guest(core)))
    return None


def finish(results, skipped):
    """The exit status of a check: SKIP (with the reason) when it could not run, else its results'."""
    if skipped:
        print("SKIP: %s" % skipped)
        return SKIP
    return results.finish()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", default=os.path.join(REPO, "dist"))
    parser.add_argument("--version", required=True, help="CMake's PROJECT_VERSION")
    parser.add_argument("check", choices=["tarball-bullseye", "tarball-xenial", "gdb-bullseye",
                                          "gdb-trixie", "gdb-bionic", "deb-bookworm",
                                          "qemu-aarch64", "deb-bookworm-arm64",
                                          "wheel-venvs", "wheel-user", "wheel-bullseye"])
    args = parser.parse_args()
    if os.geteuid() != 0 and args.check not in ("qemu-aarch64", "wheel-venvs"):
        print("SKIP: %s needs root" % ("runuser" if args.check == "wheel-user" else "chroot"))
        return SKIP
    if shutil.which("zstd") is None:
        print("SKIP: zstd is not installed (scripts/install-deps)")
        return SKIP
    if args.check.startswith("wheel-"):
        wheel = wheel_file(args.dist, args.version)
        if wheel is None:
            print("SKIP: no wheel of %s in %s (scripts/package makes it)" % (args.version,
                                                                            args.dist))
            return SKIP
        results = Results()
        if args.check == "wheel-venvs":
            skipped = check_wheel_venvs(wheel, args.version, results)
        elif args.check == "wheel-user":
            skipped = check_wheel_user(wheel, args.version, results)
        else:
            skipped = check_wheel_bullseye(wheel, release_files(args.dist, args.version)[0],
                                           args.version, results)
        return finish(results, skipped)
    if args.check == "qemu-aarch64":
        tarball = arm64_tarball(args.dist, args.version)
        if tarball is None:
            print("SKIP: no arm64 tarball of %s in %s (scripts/package --arch arm64 makes it)"
                  % (args.version, args.dist))
            return SKIP
        if shutil.which("qemu-aarch64-static") is None:
            print("SKIP: qemu-aarch64-static is not installed (scripts/install-deps --arm64)")
            return SKIP
        results = Results()
        skipped = check_qemu_aarch64(tarball, release_files(args.dist, args.version)[0],
                                     args.version, results)
        return finish(results, skipped)
    if args.check == "deb-bookworm-arm64":
        deb = os.path.join(args.dist, "hangpy_%s-1_arm64.deb" % args.version)
        if not os.path.isfile(deb):
            print("SKIP: no %s (scripts/package --arch arm64 makes it)" % deb)
            return SKIP
        # Debian 12's arm64 root of scripts/make-arm64-root, its programs run by qemu through
        # binfmt_misc: the arm64 gdb reads the corpus's aarch64 deadlock.
        root = os.path.join(os.environ.get("HANGPY_CHROOTS", "/var/tmp/hangpy-chroots"), "bookworm-arm64")
        results = Results()
        skipped = check_deb(deb, args.version, results, "bookworm-arm64",
                            Chroot("bookworm-arm64", root, ".hangpy-package-chroot-done"),
                            os.path.join(REPO, "tests", "corpus", "arm64-3.11", "deadlock.core.zst"))
        if skipped:
            print("SKIP: %s (scripts/make-arm64-root)" % skipped)
            return SKIP
        return results.finish()
    tarball, deb = release_files(args.dist, args.version)
    needed = deb if args.check == "deb-bookworm" else tarball
    if needed is None:
        print("SKIP: no release files of %s in %s (scripts/test --package makes them)"
              % (args.version, args.dist))
        return SKIP
    results = Results()
    if args.check.startswith("tarball-"):
        skipped = check_tarball(tarball, args.check[len("tarball-"):], results)
    elif args.check.startswith("gdb-"):
        skipped = check_gdb(tarball, args.check[len("gdb-"):], results)
    else:
        skipped = check_deb(deb, args.version, results)
    if skipped:
        print("SKIP: %s" % skipped)
        return SKIP
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
