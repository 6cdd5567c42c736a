#!/usr/bin/python3
"""test_package.py's checks of the wheel (wheel-venvs, wheel-user, wheel-bullseye): what each
checks is in test_package.py's usage text."""
import base64
import csv
import glob
import hashlib
import io
import json
import os
import pwd
import shutil
import tarfile
import tempfile
import zipfile

from package_common import (ARM64_ROOT, CHROOTS, EXAMPLE, EXAMPLE_FUNCTION, MAN_PAGES, REPO, Chroot, ChrootGdb,  # noqa: F401
                            coreanalyze_wrapper, gdb_session, run, run_scenarios, test_corpus,
                            test_gdb_snapshots)

# The wheel's checks: the interpreters whose venvs install it (pyenv's, where installed, and
# Debian's), the corpus snapshot each venv's coreanalyze reads, the user of wheel-user.
PYENV = os.environ.get("HANGPY_PYENV_ROOT", "/root/.pyenv")
WHEEL_PYENV_VERSIONS = ("3.7", "3.8", "3.11", "3.13")
DEBIAN_PYTHON = "/usr/bin/python3"
WHEEL_SNAPSHOT = os.path.join(REPO, "tests", "corpus", "debian-3.11", "deadlock")
# The arm64 wheel's: an aarch64 core for both its coreanalyze and its gdb.
WHEEL_ARM64_SNAPSHOT = os.path.join(REPO, "tests", "corpus", "arm64-3.11", "deadlock")
WHEEL_USER = "hangpy-wheel-test"
# Where the wheel puts the gdb init file and the module, inside its `hangpy` package.
WHEEL_GDB_INIT = "hangpy/gdb/share/hangpy/hangpy.py"
WHEEL_MODULE_DIR = "hangpy/gdb/lib/hangpy/python/"


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
    pip's cache and gdb's ~/.gdbinit there), as root or, with `user`, as that user (runuser).
    `snapshot` is the corpus core the venv's coreanalyze reads, `gdb_core` the one its gdb reads
    (of this machine's architecture)."""
    snapshot = WHEEL_SNAPSHOT
    gdb_core = EXAMPLE

    def __init__(self, home, cwd, user=None):
        self.home = home
        self.cwd = cwd
        self.user = user

    def environment_argv(self, path):
        environment = {"PATH": path, "HOME": self.home, "LC_ALL": "C.UTF-8",
                       "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
                       "PIP_CONFIG_FILE": os.devnull}
        return ["env", "-i"] + ["%s=%s" % item for item in sorted(environment.items())]

    def __call__(self, argv, path="/usr/bin:/bin"):
        argv = self.environment_argv(path) + argv
        if self.user:
            argv = ["runuser", "-u", self.user, "--"] + argv
        return run(argv, cwd=self.cwd)

    def program(self, path, directory):
        """A program this machine runs as `path` runs where the checks run (test_corpus runs one)."""
        return path


class ChrootRunner(Runner):
    """Runs them in `chroot` (a Chroot entered), where the scratch directory `cwd` is mounted at
    the same path as here, so that the checks read what the chroot's pip wrote where they look."""

    def __init__(self, chroot, home, cwd, snapshot, gdb_core):
        Runner.__init__(self, home, cwd)
        self.chroot = chroot
        self.snapshot = snapshot
        self.gdb_core = gdb_core

    def __call__(self, argv, path="/usr/bin:/bin"):
        inner = self.environment_argv(path) + ["/bin/sh", "-c", 'cd "$0" && exec "$@"', self.cwd] + argv
        return run(self.chroot.argv(inner, mirrored=[self.cwd]))

    def program(self, path, directory):
        return coreanalyze_wrapper(self.chroot, path, directory, mirrored=[self.cwd])


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
    core = os.path.join(scratch, os.path.basename(runner.snapshot) + ".core")
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
    """The venv's coreanalyze on the runner's snapshot, and `python -m hangpy` giving the same."""
    coreanalyze = os.path.join(bin_dir, "coreanalyze")
    text = runner([coreanalyze, "--no-color", core])
    problems = failed("coreanalyze " + core, text) if text.returncode != 0 else \
        snapshot_text_problems(text.stdout, runner.snapshot + ".truth.json")
    if runner.user is None:
        # The whole ground truth, as integration.corpus compares it (JSON and text), in a
        # directory of its own (it decompresses the snapshot there, then removes it).
        workdir = tempfile.mkdtemp(dir=scratch)
        problems += test_corpus.check_entry(runner.program(coreanalyze, scratch),
                                            runner.snapshot + ".core.zst",
                                            runner.snapshot + ".truth.json", workdir)
        os.rmdir(workdir)
    results.check(label + "/coreanalyze " + os.path.relpath(runner.snapshot, REPO), problems)

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
        example = run_scenarios.decompress(runner.gdb_core, scratch)
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


def venv_scratch(scratch, wheel, user=None, snapshot=WHEEL_SNAPSHOT):
    """Copies into `scratch` what check_venv reads: the wheel, the snapshot (decompressed); a
    home directory; all of it the user's."""
    shutil.copy(wheel, scratch)
    run_scenarios.decompress(snapshot + ".core.zst", scratch)
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


def check_wheel_bookworm_arm64(wheel, tarball, version, results):
    results.check("arm64 wheel contents", wheel_contents_problems(wheel, version, "aarch64"))
    chroot = Chroot("bookworm-arm64", ARM64_ROOT, ".hangpy-wheel-chroot-done")
    if not chroot.present():
        return "no bookworm-arm64 root with python3-venv in its apt cache in %s " \
            "(scripts/make-arm64-root)" % ARM64_ROOT
    with chroot:
        install = chroot.run(["apt-get", "install", "-y", "python3-venv", "gdb", "man-db"])
        results.check("bookworm-arm64/apt-get install python3-venv gdb man-db", [] if
                      install.returncode == 0 else failed("apt-get install (offline)", install))
        if install.returncode != 0:
            return None
        # The scratch directory is this machine's (the checks read it) and the root's, at one path.
        scratch = tempfile.mkdtemp(prefix="hangpy-wheel-arm64-", dir="/var/tmp")
        try:
            copy = venv_scratch(scratch, wheel, snapshot=WHEEL_ARM64_SNAPSHOT)
            label = "bookworm-arm64/python3.11"
            check_venv(label, "/usr/bin/python3", copy, version, scratch,
                       ChrootRunner(chroot, os.path.join(scratch, "home"), scratch,
                                    WHEEL_ARM64_SNAPSHOT, WHEEL_ARM64_SNAPSHOT + ".core.zst"),
                       results)
        finally:
            shutil.rmtree(scratch)
    if tarball is None:
        results.report("SKIP", "bookworm-arm64/same as the tarball", ["no arm64 tarball to compare with"])
    else:
        with zipfile.ZipFile(wheel) as archive:
            in_wheel = archive.read("hangpy-%s.data/scripts/coreanalyze" % version)
        results.check("bookworm-arm64/same as the tarball", [] if in_wheel == tarball_member(
            tarball, "/bin/coreanalyze") else ["the wheel's coreanalyze differs from the arm64 tarball's"])
    return None
