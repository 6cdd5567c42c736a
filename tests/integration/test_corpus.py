#!/usr/bin/python3
"""The committed corpus (tests/corpus, made by scripts/make-corpus): snapshot cores of every
scenario under every interpreter, checked on any machine, with no interpreter installed.

  test_corpus.py --coreanalyze build/bin/coreanalyze [--corpus tests/corpus]

First the manifest (tests/corpus/manifest.json, corpus_manifest.py): every interpreter directory
and every scenario has an entry, and the files on disk are exactly what it lists.

Each tests/corpus/<interpreter>/<scenario>.core.zst is decompressed to a temporary directory and
`coreanalyze --json` is compared with <scenario>.truth.json as the live integration tests
compare it: pid, version, threads, frames with file, line, function, first_line and qualname,
every thread's kernel id and name, the threads without Python, the process facts, no warnings,
and the diagnosis the program wrote of itself (compare_diagnosis.py: what each thread waits for,
who could end the wait, the locks held, the deadlock cycles). The text output must exit 0 and
show, under each thread's header, the same frame lines and its "Blocked on:" line. A ground truth
with an "asyncio" section (asyncio_hang) is compared with coreanalyze's asyncio tasks too: their
addresses, names, coroutine stacks, what each awaits, the awaited-by edges, the await cycle and
the text section (compare_asyncio.py). A ground truth that lacks what today's programs record
fails unless the manifest marks it legacy_truth, with why; an entry marked expected_failure must
fail (and fails the test when it passes).

Every snapshot, and the bundled example (examples/deadlock.core.zst), must also be a fixed point
of `--snapshot`: written anew from itself it is the same file, byte for byte. A snapshot keeps only
the bytes the analysis reads, so one that is not a fixed point holds bytes nobody reads (the
environment's strings, a heap neighbour: what hangpy before issue 19 kept) or misses some; after
a change to what the analysis reads, `scripts/make-corpus --rescrub` (and `scripts/make-example-core`)
write them anew, and --rescrub refuses one whose diagnosis would change.

Then a few snapshots are read with --python: with the right version they must pass the same
checks; with a wrong one coreanalyze must exit 6 (the layout does not fit) and say so on stderr,
without crashing.

Exit status: 0 all passed, 1 a failure, 77 zstd is not installed (ctest's SKIP_RETURN_CODE).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import corpus_manifest  # noqa: E402
import interpreters  # noqa: E402
import job_corpus  # noqa: E402
import run_scenarios  # noqa: E402
from results import SKIP, Results  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUFFIX = ".core.zst"

# (snapshot's interpreter, --python to force): layouts of other versions, older and newer, and
# across the 2/3 split. Pairs whose snapshot is not in the corpus are skipped.
WRONG_PYTHON = [
    ("pyenv-3.11", "3.8"),
    ("pyenv-3.8", "3.12"),
    ("pyenv-2.7", "3.11"),
    ("pyenv-3.13", "3.6"),
    ("pyenv-3.12", "2.7"),
]
# The control: the right version given with --python reads the snapshot as detection does, except
# that the micro release may be missing from python_version (3.11+ cores, live ones too: there the
# micro comes from version detection, which --python skips).
RIGHT_PYTHON = [
    ("pyenv-3.11", "3.11"),
    ("pyenv-2.7", "2.7"),
]
PYTHON_SCENARIO = "deadlock"
# The scenarios whose programs record what each thread waits for (groundtruth.expect_wait): their
# ground truths must hold it.
DIAGNOSED_SCENARIOS = ("deadlock", "deep_recursion", "unicode_names", "generator", "lambda",
                       "method", "exec", "asyncio_task", "asyncio_hang", "native_thread",
                       "finalizing")
MISMATCH_TEXT = "does not fit"
# coreanalyze's exit code when the layout (here the one --python forces) does not fit the process
# (base/exit_codes.h kExitWrongLayout; docs/usage.md, README: "6 the Python layout ... does not fit").
WRONG_LAYOUT_EXIT = 6


def entries(corpus):
    """(label, compressed core, truth path) for every snapshot in the corpus, sorted."""
    found = []
    for core in sorted(glob.glob(os.path.join(corpus, "*", "*" + SUFFIX))):
        truth = core[:-len(SUFFIX)] + ".truth.json"
        label = os.path.relpath(core[:-len(SUFFIX)], corpus)
        found.append((label, core, truth))
    return found


def check_entry(coreanalyze, core, truth_path, workdir, extra_args=(), minor_only=False,
                source_root=None):
    """Problems; `minor_only`: accept a python_version without the micro release;
    `source_root`: where coreanalyze runs in a chroot, its root (the sources it can read)."""
    if not os.path.exists(truth_path):
        return ["no ground truth %s next to it" % os.path.basename(truth_path)]
    with open(truth_path) as truth_file:
        truth = json.load(truth_file)
    if minor_only:
        truth["version"] = ".".join(truth["version"].split(".")[:2])
    plain = run_scenarios.decompress(core, workdir)
    try:
        # No sysroot, no binaries: everything must come from the snapshot.
        no_binaries = interpreters.Interpreter("corpus", None)
        return run_scenarios.check_core(coreanalyze, plain, no_binaries, truth, extra_args,
                                        source_root=source_root)
    finally:
        os.remove(plain)


def truth_completeness(label, truth_path, legacy_reason):
    """Problems: a ground truth lacking what today's programs record, unless the manifest marks
    it legacy_truth with a reason; or one so marked that lacks nothing."""
    if not os.path.exists(truth_path):
        return []  # check_entry says so
    with open(truth_path) as stream:
        truth = json.load(stream)
    scenario = label.split("/")[-1]
    missing = compare.missing_truth(truth, scenario in DIAGNOSED_SCENARIOS)
    if missing and legacy_reason is None:
        return ["the ground truth lacks %s: capture it again (scripts/make-corpus), or mark it "
                "legacy_truth in manifest.json with why it cannot be" % ", ".join(missing)]
    if not missing and legacy_reason is not None:
        return ["marked legacy_truth (%s), but its ground truth is whole: mark it present"
                % legacy_reason]
    return []


def check_fixed_point(coreanalyze, core, workdir, extra=()):
    """Problems: the snapshot written from the snapshot `core` differs from it (read with the
    options `extra` it was taken with)."""
    plain = run_scenarios.decompress(core, workdir)
    again = plain + ".again"
    try:
        result = subprocess.run([coreanalyze, plain, "--json", "--snapshot", again] + list(extra),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                timeout=run_scenarios.COREANALYZE_TIMEOUT)
        if result.returncode not in (0, 5) or not os.path.exists(again):
            return ["--snapshot: exit %d: %s" % (result.returncode,
                                                 result.stderr.decode("utf-8", "replace").strip()[-400:])]
        with open(plain, "rb") as a, open(again, "rb") as b:
            before, after = a.read(), b.read()
        if before == after:
            return []
        return ["written anew from itself it differs (%d bytes, then %d): it holds bytes the "
                "analysis does not read, or lacks some; scripts/make-corpus --rescrub"
                % (len(before), len(after))]
    finally:
        for path in (plain, again):
            if os.path.exists(path):
                os.remove(path)


def check_wrong_python(coreanalyze, core, python, workdir):
    """(problems, what happened) for the snapshot read with --python `python`."""
    plain = run_scenarios.decompress(core, workdir)
    try:
        result = subprocess.run([coreanalyze, plain, "--python", python, "--no-color"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                timeout=run_scenarios.COREANALYZE_TIMEOUT)
    finally:
        os.remove(plain)
    stderr = result.stderr.decode("utf-8", "replace").strip()
    code = result.returncode
    happened = "exit %d, stderr %r" % (code, stderr[:400])
    problems = []
    if code < 0 or code >= 128:
        problems.append("crashed")
    elif code != WRONG_LAYOUT_EXIT:
        problems.append("exit %d, not %d (the layout does not fit)" % (code, WRONG_LAYOUT_EXIT))
    # "coreanalyze: the Python 3.8 layout (chosen by --python) does not fit this process: ..."
    said = "the Python %s layout (chosen by --python) %s" % (python, MISMATCH_TEXT)
    if not any(line.startswith("coreanalyze: ") and said in line for line in stderr.splitlines()):
        problems.append("no stderr line saying %r" % said)
    return problems, happened


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coreanalyze", default=os.path.join(REPO, "build", "bin", "coreanalyze"))
    parser.add_argument("--corpus", default=os.path.join(REPO, "tests", "corpus"))
    args = parser.parse_args()
    if not os.access(args.coreanalyze, os.X_OK):
        print("coreanalyze not found at %s (build it first)" % args.coreanalyze, file=sys.stderr)
        return 1
    if shutil.which("zstd") is None:
        print("SKIP: zstd is not installed (scripts/install-deps)")
        return SKIP
    corpus = entries(args.corpus)
    if not corpus:
        print("no snapshots in %s (scripts/make-corpus makes them)" % args.corpus, file=sys.stderr)
        return 1
    results = Results()
    directories = [name for name in os.listdir(args.corpus)
                   if os.path.isdir(os.path.join(args.corpus, name)) and name != "jobs"]
    results.check("the manifest lists every interpreter x scenario, and the files match it",
                  corpus_manifest.problems(args.corpus, run_scenarios.SCENARIOS, directories))
    expected_failures = corpus_manifest.marked(args.corpus, "expected_failure")
    legacy = corpus_manifest.marked(args.corpus, "legacy_truth")
    workdir = tempfile.mkdtemp(prefix="hangpy-corpus-test-")
    try:
        for label, core, truth in corpus:
            problems = check_entry(args.coreanalyze, core, truth, workdir)
            problems += truth_completeness(label, truth, legacy.get(label))
            if label in expected_failures:
                # Stored failing, with its reason: it must still fail, or the mark must go.
                reason = expected_failures[label]
                results.check("%s fails as the manifest expects (%s)" % (label, reason),
                              [] if problems else ["it passes now: mark it present in manifest.json"])
                continue
            results.check(label, problems)
        example = os.path.join(REPO, "examples", "deadlock" + SUFFIX)
        for label, core in [(label, core) for label, core, _ in corpus] + [("examples/deadlock", example)]:
            results.check("%s is a fixed point of --snapshot" % label,
                          check_fixed_point(args.coreanalyze, core, workdir))
        # Whole jobs (tests/corpus/jobs, scripts/make-job-corpus): their verdicts from the
        # snapshot cores alone; each core a fixed point too, read as collect takes it (--locals).
        for job in sorted(glob.glob(os.path.join(args.corpus, "jobs", "*", "verdict.json"))):
            directory = os.path.dirname(job)
            label = os.path.relpath(directory, args.corpus)
            results.check("%s: the verdict" % label, job_corpus.check(args.coreanalyze, directory))
            for core in sorted(glob.glob(os.path.join(directory, "*" + SUFFIX))):
                results.check("%s is a fixed point of --snapshot" % os.path.relpath(core, args.corpus),
                              check_fixed_point(args.coreanalyze, core, workdir, ["--locals"]))
        by_label = dict((label, (core, truth)) for label, core, truth in corpus)
        for interpreter, python in RIGHT_PYTHON:
            label = "%s/%s" % (interpreter, PYTHON_SCENARIO)
            name = "%s with --python %s" % (label, python)
            if label not in by_label:
                results.report("SKIP", name, ["not in the corpus"])
                continue
            problems = check_entry(args.coreanalyze, by_label[label][0], by_label[label][1],
                                   workdir, ["--python", python], minor_only=True)
            results.check(name, problems)
        for interpreter, python in WRONG_PYTHON:
            label = "%s/%s" % (interpreter, PYTHON_SCENARIO)
            name = "%s with --python %s" % (label, python)
            if label not in by_label:
                results.report("SKIP", name, ["not in the corpus"])
                continue
            problems, happened = check_wrong_python(args.coreanalyze, by_label[label][0], python,
                                                    workdir)
            results.report("FAIL" if problems else "PASS", name, problems + [happened])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("%d snapshots in the corpus" % len(corpus))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
