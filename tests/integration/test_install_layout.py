#!/usr/bin/python3
"""Integration test: `cmake --install` into a temporary prefix lays out a working hangpy: the
installed coreanalyze prints its version and reads the bundled example core, the man pages
render with man -l, the bash completion offers the options of --help, and gdb loads the
installed module through the installed init file and reads the example core with it. A second
install with DESTDIR checks that the init file names the prefix, not the staging directory.

Exit status: 0 passed, 1 failed, 77 skipped (a part could not run: what is missing is named).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(REPO, "examples", "deadlock.core.zst")
SKIP = 77
TIMEOUT = 60


def run(argv, **kwargs):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT,
                          universal_newlines=True, **kwargs)


class Checks:
    def __init__(self):
        self.problems = []
        self.skipped = []

    def expect(self, condition, problem):
        if not condition:
            self.problems.append(problem)
        return condition


def install(args, prefix, destdir=None):
    environment = dict(os.environ)
    environment.pop("DESTDIR", None)
    if destdir:
        environment["DESTDIR"] = destdir
    return run([args.cmake, "--install", args.build_dir, "--prefix", prefix], env=environment)


def check_files(prefix, args, checks):
    expected = ["bin/coreanalyze", "share/bash-completion/completions/coreanalyze"]
    if args.gdb_module:
        expected += ["share/hangpy/hangpy.gdb", "share/hangpy/hangpy.py",
                     "share/man/man1/hangpy-gdb.1"]
        checks.expect(glob.glob(os.path.join(prefix, "lib/hangpy/python/hangpy*.so")),
                      "no module in %s/lib/hangpy/python" % prefix)
    else:
        checks.skipped.append("the gdb module was not built (no gdb with Python headers)")
    if args.help2man:
        expected += ["share/man/man1/coreanalyze%s.1" % page for page in ("", "-triage", "-collect")]
    else:
        checks.skipped.append("coreanalyze.1 was not built: help2man is missing "
                              "(scripts/install-deps)")
    for path in expected:
        checks.expect(os.path.isfile(os.path.join(prefix, path)), "not installed: " + path)


def check_coreanalyze(prefix, args, checks):
    """Returns the CPython range --version names, for the gdb module's to match."""
    coreanalyze = os.path.join(prefix, "bin", "coreanalyze")
    version = run([coreanalyze, "--version"])
    lines = version.stdout.splitlines()
    checks.expect(version.returncode == 0 and lines[:1] == ["coreanalyze (hangpy) " + args.version],
                  "--version: %d %r %r" % (version.returncode, version.stdout, version.stderr))
    supported = re.match(r"^Reads CPython (.*2\.7.*3\.6 to 3\.\d+.*)\.$", "\n".join(lines[1:]))
    checks.expect(supported, "--version names no CPython range: %r" % version.stdout)
    example = run([coreanalyze, "--no-color", EXAMPLE])
    checks.expect(example.returncode == 0 and "deadlock" in example.stdout.lower(),
                  "installed coreanalyze on the example core: %d %s" % (example.returncode,
                                                                        example.stderr))
    return supported.group(1) if supported else None


def check_man_page(path, expected_text, checks):
    if not os.path.isfile(path):
        return
    if not shutil.which("man"):
        checks.skipped.append("no man to render %s (scripts/install-deps installs man-db)" % path)
        return
    environment = dict(os.environ, MANWIDTH="100", MANPAGER="cat", PAGER="cat", LC_ALL="C.UTF-8")
    rendered = run(["man", "--warnings", "-l", path], env=environment)
    text = " ".join(rendered.stdout.split())  # man justifies lines with extra spaces
    checks.expect(rendered.returncode == 0 and rendered.stderr.strip() == "",
                  "man -l %s: %d %s" % (path, rendered.returncode, rendered.stderr.strip()))
    for wanted in expected_text:
        checks.expect(wanted in text, "man -l %s does not show %r" % (path, wanted))


def complete(completion_file, words, cwd=None):
    """COMPREPLY of the installed completion for the command line `words` (last one completed)."""
    script = ('source "$1"; shift; complete -p coreanalyze; COMP_WORDS=("$@"); '
              'COMP_CWORD=$(($# - 1)); _coreanalyze; printf "reply %s\\n" "${COMPREPLY[@]}"')
    result = run(["bash", "--norc", "--noprofile", "-i", "-c", script, "bash", completion_file]
                 + words, stdin=subprocess.DEVNULL, cwd=cwd)
    lines = result.stdout.splitlines()
    return lines[:1], sorted(line[len("reply "):] for line in lines
                             if line.startswith("reply ") and line != "reply ")


def check_completion(prefix, checks):
    if not shutil.which("bash"):
        checks.skipped.append("no bash for the completion")
        return
    completion_file = os.path.join(prefix, "share/bash-completion/completions/coreanalyze")
    coreanalyze = os.path.join(prefix, "bin", "coreanalyze")
    registered, no_options = complete(completion_file, [coreanalyze, "--no-"])
    checks.expect(registered == ["complete -o filenames -F _coreanalyze coreanalyze"],
                  "complete -p coreanalyze: %s" % registered)
    checks.expect(no_options == ["--no-color", "--no-realtime", "--no-source", "--no-tasks"],
                  "completion of --no-: %s" % no_options)
    _, triage_options = complete(completion_file, [coreanalyze, "triage", "--j"])
    checks.expect(triage_options == ["--jobs", "--json"],
                  "completion of triage --j: %s" % triage_options)
    _, collect_options = complete(completion_file, [coreanalyze, "collect", "--no-"])
    checks.expect(collect_options == ["--no-locals", "--no-triage"],
                  "completion of collect --no-: %s" % collect_options)
    with tempfile.TemporaryDirectory() as directory:
        os.mkdir(os.path.join(directory, "triage-results"))
        _, first_words = complete(completion_file, [coreanalyze, os.path.join(directory, "tr")])
        checks.expect(first_words == [os.path.join(directory, "triage-results")],
                      "completion of a path: %s" % first_words)
        _, subcommands = complete(completion_file, [coreanalyze, "tr"], cwd=directory)
        checks.expect(subcommands == ["triage", "triage-results"],
                      "completion of the first word tr: %s" % subcommands)


def check_gdb(prefix, supported, args, checks, init_name="hangpy.gdb", module_prefix=None):
    """gdb sources the installed init file, loads the installed module and reads the example core.
    module_prefix: where the module must come from, when the tree was moved after installing."""
    if not args.gdb_module:
        return
    zstd = shutil.which("zstd")
    if not zstd:
        checks.skipped.append("no zstd to open the example core in gdb (scripts/install-deps)")
        return
    module_prefix = module_prefix or prefix
    init_file = os.path.join(prefix, "share", "hangpy", init_name)
    with tempfile.TemporaryDirectory() as directory:
        core = os.path.join(directory, "deadlock.core")
        subprocess.run([zstd, "-q", "-d", "-f", EXAMPLE, "-o", core], check=True, timeout=TIMEOUT)
        commands = [("file", 'python import sys; print(sys.modules["hangpy"].__file__)'),
                    ("help", "help py-bt"), ("version", "hangpy version"), ("py-bt", "py-bt")]
        argv = ["gdb", "-batch", "-nx", "-iex", "set auto-load python-scripts off",
                "-ex", "source " + init_file, "-ex", "load hangpy"]
        for name, command in commands:
            argv += ["-ex", "echo \\n@@@ %s\\n" % name, "-ex", command]
        result = run(argv + ["-c", core])
    sections = {}
    for part in result.stdout.split("\n@@@ ")[1:]:
        name, _, text = part.partition("\n")
        sections[name] = text.strip()
    module_file = sections.get("file", "")
    checks.expect(module_file.startswith(os.path.join(module_prefix, "lib", "hangpy", "python") + "/"),
                  "%s: gdb loaded the module from %r, not the one under %s (%s)"
                  % (init_name, module_file, module_prefix, result.stderr.strip()))
    checks.expect("Usage: py-bt" in sections.get("help", ""),
                  "help py-bt: %r" % sections.get("help"))
    checks.expect(sections.get("version") == "hangpy %s: reads CPython %s" % (args.version,
                                                                               supported),
                  "hangpy version: %r, coreanalyze --version: %r" % (sections.get("version"),
                                                                      supported))
    checks.expect("in _wait_for_tstate_lock" in sections.get("py-bt", ""),
                  "py-bt on the example core: %r %s" % (sections.get("py-bt"), result.stderr))


def check_moved(prefix, supported, args, checks):
    """hangpy.py finds the module beside itself: an installed tree copied elsewhere (an unpacked
    tarball) loads its own module, not the one at the path written when installing."""
    if not args.gdb_module:
        return
    with tempfile.TemporaryDirectory() as directory:
        moved = os.path.join(directory, "moved")
        shutil.copytree(prefix, moved, symlinks=True)
        check_gdb(moved, supported, args, checks, init_name="hangpy.py")


def check_destdir(args, checks):
    """A staged install (packages): files under DESTDIR, the init file naming the prefix."""
    if not args.gdb_module:
        return
    with tempfile.TemporaryDirectory() as destdir:
        prefix = "/opt/hangpy-install-test"
        result = install(args, prefix, destdir)
        if not checks.expect(result.returncode == 0, "DESTDIR install: " + result.stderr):
            return
        init_file = destdir + prefix + "/share/hangpy/hangpy.gdb"
        with open(init_file) as init:
            text = init.read()
        checks.expect('"%s/lib/hangpy/python"' % prefix in text and destdir not in text,
                      "the staged init file does not name %s/lib/hangpy/python alone" % prefix)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cmake", required=True)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--version", required=True, help="CMake's PROJECT_VERSION")
    parser.add_argument("--gdb-module", type=int, required=True, help="1 when it was built")
    parser.add_argument("--help2man", default="", help="help2man's path when it was found")
    args = parser.parse_args()
    args.help2man = args.help2man if not args.help2man.endswith("NOTFOUND") else ""
    checks = Checks()
    with tempfile.TemporaryDirectory() as prefix:
        result = install(args, prefix)
        if not checks.expect(result.returncode == 0, "cmake --install: " + result.stderr):
            print("\n".join(checks.problems))
            return 1
        check_files(prefix, args, checks)
        supported = check_coreanalyze(prefix, args, checks)
        check_man_page(os.path.join(prefix, "share/man/man1/coreanalyze.1"),
                       ["coreanalyze - print the Python stacks", "--no-color", "--pid PID",
                        "hangpy " + args.version, "hangpy-gdb(1)"], checks)
        check_man_page(os.path.join(prefix, "share/man/man1/coreanalyze-triage.1"),
                       ["coreanalyze-triage - merge", "--jobs", "hangpy " + args.version], checks)
        check_man_page(os.path.join(prefix, "share/man/man1/coreanalyze-collect.1"),
                       ["coreanalyze-collect - snapshot", "--no-triage", "--srun JOBID",
                        "coreanalyze-triage(1)"], checks)
        check_man_page(os.path.join(prefix, "share/man/man1/hangpy-gdb.1"),
                       ["hangpy-gdb - Python stacks in gdb", "py-bt-full", "py-deadlock",
                        "Usage: py-print NAME", "hangpy version", "coreanalyze(1)"], checks)
        check_completion(prefix, checks)
        check_gdb(prefix, supported, args, checks)
        check_moved(prefix, supported, args, checks)
    check_destdir(args, checks)
    for problem in checks.problems:
        print("FAIL: " + problem)
    if checks.problems:
        return 1
    for reason in checks.skipped:
        print("SKIP: " + reason)
    if checks.skipped:
        return SKIP
    print("install.layout: every installed file works")
    return 0


if __name__ == "__main__":
    sys.exit(main())
