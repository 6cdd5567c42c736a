#!/usr/bin/python3
"""The tests' self-test: each check that must see a kind of damage is run against a coreanalyze
whose output is damaged that way (damaged_coreanalyze.py), and against a corpus with an entry
deleted, and must FAIL; the same checks against the real coreanalyze must pass (the control).

  test_self_damage.py --coreanalyze build/bin/coreanalyze

Checks and the damage each must catch:
  the corpus (test_corpus.py, one interpreter's entries): thread names and native ids deleted,
      function names wrong, the diagnosis (blocked_on, held locks, deadlocks) removed (in the
      JSON and the text, and in the text alone), headers and source lines removed, stdout
      dropped, a wrong --python's exit code; an entry deleted; an entry not in the manifest
  the example core (test_example.py): function names wrong, headers and source lines removed,
      the diagnosis removed, source lines alone removed (the example is read with its program
      under --sysroot)
  hostile names (test_hostile_names.py): stdout and the page dropped, names deleted

Exit status: 0 every damage was caught and every control passed, 1 otherwise, 77 zstd missing.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_manifest  # noqa: E402
from results import SKIP, Results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# One interpreter's entries: a 3.11+ one, so qualnames, positions and lock owners are all there.
CORPUS_INTERPRETER = "pyenv-3.12"

CORPUS_DAMAGES = ("names", "functions", "diagnosis", "layout", "stdout", "text-names",
                  "text-functions", "text-diagnosis", "exit-code")
EXAMPLE_DAMAGES = ("functions", "layout", "diagnosis", "text-functions", "text-diagnosis",
                   "text-sources")
HOSTILE_DAMAGES = ("stdout", "names")


def wrapper(workdir, damage, coreanalyze):
    """An executable that runs coreanalyze with `damage` done to its output."""
    path = os.path.join(workdir, "coreanalyze-%s" % damage)
    with open(path, "w") as script:
        script.write("#!/bin/sh\nexec %s %s %s %s \"$@\"\n" % (
            sys.executable, os.path.join(HERE, "damaged_coreanalyze.py"), damage, coreanalyze))
    os.chmod(path, 0o755)
    return path


def run_test(script, coreanalyze, extra=()):
    """(exit status, the output's last lines) of one test driver."""
    result = subprocess.run([sys.executable, os.path.join(HERE, script), "--coreanalyze",
                             coreanalyze] + list(extra), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, timeout=900)
    tail = result.stdout.decode("utf-8", "replace").strip().splitlines()[-12:]
    return result.returncode, tail


def small_corpus(workdir):
    """A corpus of CORPUS_INTERPRETER's entries alone, with its manifest."""
    corpus = os.path.join(workdir, "corpus")
    source = os.path.join(REPO, "tests", "corpus")
    shutil.copytree(os.path.join(source, CORPUS_INTERPRETER),
                    os.path.join(corpus, CORPUS_INTERPRETER))
    manifest = corpus_manifest.load(source) or {}
    corpus_manifest.save(corpus, {CORPUS_INTERPRETER: manifest.get(CORPUS_INTERPRETER, {})})
    return corpus


def expect(results, label, status, tail, want_failure):
    if want_failure:
        results.check(label, [] if status == 1 else
                      ["exit %d, want 1 (the test did not see the damage):" % status] + tail)
    else:
        results.check(label, [] if status == 0 else ["exit %d, want 0:" % status] + tail)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    if shutil.which("zstd") is None:
        print("SKIP: zstd is not installed (scripts/install-deps)")
        return SKIP
    coreanalyze = os.path.abspath(args.coreanalyze)
    results = Results()
    workdir = tempfile.mkdtemp(prefix="hangpy-self-damage-")
    try:
        if not os.path.isdir(os.path.join(REPO, "tests", "corpus", CORPUS_INTERPRETER)):
            results.report("FAIL", "corpus", ["no %s in tests/corpus" % CORPUS_INTERPRETER])
            return results.finish()
        corpus = small_corpus(workdir)
        status, tail = run_test("test_corpus.py", coreanalyze, ["--corpus", corpus])
        expect(results, "control: the corpus of %s passes" % CORPUS_INTERPRETER, status, tail, False)
        for damage in CORPUS_DAMAGES:
            status, tail = run_test("test_corpus.py", wrapper(workdir, damage, coreanalyze),
                                    ["--corpus", corpus])
            expect(results, "the corpus sees damage %r" % damage, status, tail, True)
        # An entry deleted: the manifest still lists it.
        deleted = os.path.join(corpus, CORPUS_INTERPRETER, "method.core.zst")
        moved = os.path.join(workdir, "method.core.zst")
        shutil.move(deleted, moved)
        status, tail = run_test("test_corpus.py", coreanalyze, ["--corpus", corpus])
        expect(results, "the corpus sees an entry deleted", status, tail, True)
        shutil.move(moved, deleted)
        # An entry the manifest does not list.
        manifest = corpus_manifest.load(corpus)
        del manifest[CORPUS_INTERPRETER]["method"]
        corpus_manifest.save(corpus, manifest)
        status, tail = run_test("test_corpus.py", coreanalyze, ["--corpus", corpus])
        expect(results, "the corpus sees an entry missing from the manifest", status, tail, True)

        status, tail = run_test("test_example.py", coreanalyze)
        expect(results, "control: the example passes", status, tail, False)
        for damage in EXAMPLE_DAMAGES:
            status, tail = run_test("test_example.py", wrapper(workdir, damage, coreanalyze))
            expect(results, "the example sees damage %r" % damage, status, tail, True)

        status, tail = run_test("test_hostile_names.py", coreanalyze)
        if status == SKIP:
            results.report("SKIP", "hostile names", tail[-1:])
        else:
            expect(results, "control: hostile names pass", status, tail, False)
            for damage in HOSTILE_DAMAGES:
                status, tail = run_test("test_hostile_names.py", wrapper(workdir, damage, coreanalyze))
                expect(results, "hostile names see damage %r" % damage, status, tail, True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
