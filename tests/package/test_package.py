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
wheel-bookworm-arm64
                  The arm64 wheel (scripts/package --arch arm64) in Debian 12's arm64 root
                  (scripts/make-arm64-root; its programs run by qemu through binfmt_misc):
                  python3-venv and gdb installed from the root's apt cache (no network), then
                  what wheel-venvs checks, in a venv of the root's python3.11, on the corpus's
                  aarch64 deadlock snapshot with the root's arm64 gdb; and the same coreanalyze
                  as the arm64 tarball's.
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
import glob
import json
import os
import shutil
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from package_common import (ARM64_GLIBC, ARM64_ROOT, CHROOTS, EXAMPLE, EXAMPLE_FUNCTION, REPO, Chroot,  # noqa: E402
                            ChrootGdb, coreanalyze_wrapper, run)
from package_common import gdb_session, run_scenarios, test_corpus, test_example, test_gdb_snapshots  # noqa: E402,F401
from results import SKIP, Results  # noqa: E402
import wheel_checks  # noqa: E402


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
                                          "wheel-venvs", "wheel-user", "wheel-bullseye",
                                          "wheel-bookworm-arm64"])
    args = parser.parse_args()
    if os.geteuid() != 0 and args.check not in ("qemu-aarch64", "wheel-venvs"):
        print("SKIP: %s needs root" % ("runuser" if args.check == "wheel-user" else "chroot"))
        return SKIP
    if shutil.which("zstd") is None:
        print("SKIP: zstd is not installed (scripts/install-deps)")
        return SKIP
    if args.check.startswith("wheel-"):
        arm64 = args.check.endswith("-arm64")
        wheel = wheel_checks.wheel_file(args.dist, args.version, "aarch64" if arm64 else "x86_64")
        if wheel is None:
            print("SKIP: no %swheel of %s in %s (scripts/package%s makes it)" % (
                "arm64 " if arm64 else "", args.version, args.dist, " --arch arm64" if arm64 else ""))
            return SKIP
        results = Results()
        if arm64:
            skipped = wheel_checks.check_wheel_bookworm_arm64(wheel, arm64_tarball(args.dist, args.version),
                                                              args.version, results)
        elif args.check == "wheel-venvs":
            skipped = wheel_checks.check_wheel_venvs(wheel, args.version, results)
        elif args.check == "wheel-user":
            skipped = wheel_checks.check_wheel_user(wheel, args.version, results)
        else:
            skipped = wheel_checks.check_wheel_bullseye(wheel, release_files(args.dist, args.version)[0],
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
        results = Results()
        skipped = check_deb(deb, args.version, results, "bookworm-arm64",
                            Chroot("bookworm-arm64", ARM64_ROOT, ".hangpy-package-chroot-done"),
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
