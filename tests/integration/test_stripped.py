#!/usr/bin/python3
"""Integration test: stripped interpreters. For each interpreter present, take a core of the
deadlock scenario, then read it through a --sysroot in which the interpreter's own files
(python executable, libpython) are copies with `strip --strip-all` (only .dynsym left), and once
more with the runtime's symbol names also made unfindable (so the runtime must be found by
decoding PyInterpreterState_Head or by searching the data). Every frame must still match the
interpreter's ground truth, and the notes must say which way the runtime was found.

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
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
from results import Results  # noqa: E402

NAMES = ["debian-3.11", "pyenv-2.7", "pyenv-3.6", "pyenv-3.9", "pyenv-3.11", "pyenv-3.12",
         "pyenv-3.13"]
# Names a stripped interpreter still exports; renaming them in .dynstr hides them from lookup.
HIDDEN_NAMES = [b"_PyRuntime", b"interp_head", b"PyInterpreterState_Head"]
PYTHON_FILE = re.compile(r"(^|/)(lib)?python\d\.\d+")


def mapped_files(coreanalyze, core):
    """The ELF files the core says the process had mapped."""
    out = subprocess.run([coreanalyze, core, "--json"], stdout=subprocess.PIPE)
    return json.loads(out.stdout.decode("utf-8"))["process"]["modules"]


def hide_symbols(path):
    data = open(path, "rb").read()
    for name in HIDDEN_NAMES:
        # Same length, so no offset in the file moves; the GNU hash no longer matches either.
        data = data.replace(name + b"\0", name[:-1] + b"X\0")
    open(path, "wb").write(data)


def make_sysroot(coreanalyze, core, root, hide):
    for path in mapped_files(coreanalyze, core):
        if not os.path.exists(path):
            continue
        target = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if PYTHON_FILE.search(os.path.basename(path)):
            shutil.copy(path, target)
            subprocess.run(["strip", "--strip-all", target], check=True)
            if hide:
                hide_symbols(target)
        else:
            os.symlink(path, target)


def check_variant(coreanalyze, core, truth, interpreter, workdir, hide):
    root = os.path.join(workdir, "sysroot-hidden" if hide else "sysroot-stripped")
    make_sysroot(coreanalyze, core, root, hide)
    problems = run_scenarios.check_core(coreanalyze, core, interpreter, truth, ["--sysroot", root])
    result = subprocess.run([coreanalyze, core, "--json", "--sysroot", root],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        notes = " ".join(json.loads(result.stdout.decode("utf-8")).get("notes") or [])
    except ValueError:
        return problems or ["no JSON: %s" % result.stderr.decode("utf-8", "replace").strip()]
    if hide and "search of data" not in notes and "PyInterpreterState_Head" not in notes:
        problems.append("the runtime was not found by decoding or searching: notes %r" % notes)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    for name, interpreter in interpreters.each_installed(NAMES, results):
        workdir = run_scenarios.scenario_workdir(interpreter, "hangpy-stripped-")
        try:
            core, _, truth = run_scenarios.capture(interpreter, "deadlock", "gcore", workdir)
            for hide in (False, True):
                label = "%s %s" % (name, "no runtime symbols" if hide else "strip --strip-all")
                results.check(label, check_variant(args.coreanalyze, core, truth, interpreter,
                                                   workdir, hide))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return results.finish(skip_when_none_ran=True)


if __name__ == "__main__":
    sys.exit(main())
