#!/usr/bin/python3
"""Docs that cannot drift (issues 39 and 40): what README.md and scripts/install-deps state of the
tree is checked against the tree.

- README.md stays within 250 lines: reference material belongs in docs/;
- the number of packages the demo installs, as README.md and install-deps' own usage text state
  it, is the number of entries of install-deps' `build` list;
- the size README.md gives the bundled example core (whole, and compressed) is its size;
- every relative link of README.md names a file of the repository;
- CONTRIBUTING.md states no measured time (each run prints its own) and names every fuzz target;
- the demo's output as README.md shows it is what coreanalyze prints for the bundled example core
  (run as scripts/demo runs it): every line of the excerpt, in order, "..." standing for lines
  left out.

Exit status: 0 passed, 1 failed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import Results  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README_MOST_LINES = 250


def read(path):
    with open(os.path.join(TOP, path), encoding="utf-8") as stream:
        return stream.read()


def build_list_length(install_deps):
    """Entries of the `build=( ... )` list: one quoted line per package."""
    block = re.search(r"^build=\(\n(.*?)^\)", install_deps, re.M | re.S)
    return None if block is None else len(re.findall(r'^\s*"[a-z0-9.+-]+\s', block.group(1), re.M))


def demo_excerpt(readme):
    """The code block README.md shows after the demo's sentence: the lines the demo prints."""
    found = re.search(r"The demo prints, from.*?\n```\n(.*?)\n```", readme, re.S)
    return None if found is None else found.group(1).splitlines()


def demo_output(coreanalyze, workdir):
    """What scripts/demo prints for the example core: the program's files where --sysroot finds
    them, as the core names them."""
    root = os.path.join(workdir, "example-root")
    program_dir = os.path.join(root, "tmp", "hangpy-example")
    os.makedirs(program_dir)
    for name in ("deadlock.py", "groundtruth.py"):
        shutil.copy(os.path.join(TOP, "tests", "programs", name), program_dir)
    core = os.path.join(workdir, "deadlock.core")
    with open(core, "wb") as out:
        subprocess.run(["zstd", "-dc", os.path.join(TOP, "examples", "deadlock.core.zst")], stdout=out, check=True)
    result = subprocess.run([coreanalyze, core, "--sysroot", root, "--no-color"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=60)
    return result.returncode, result.stdout.decode("utf-8", "replace").splitlines()


def excerpt_problems(excerpt, printed):
    """The excerpt's lines not found in order in what was printed ("..." skips any lines)."""
    problems, at = [], 0
    for line in excerpt:
        if line.strip() == "...":
            continue
        try:
            at = printed.index(line, at) + 1
        except ValueError:
            problems.append("README shows %r, which the demo does not print (in that order)" % line)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coreanalyze", help="the build's coreanalyze: also checks the demo's output")
    args = parser.parse_args()
    results = Results()
    readme = read("README.md")
    lines = readme.count("\n")
    results.check("README.md has %d lines, at most %d" % (lines, README_MOST_LINES),
                  [] if lines <= README_MOST_LINES else ["%d lines: move reference material to docs/" % lines])

    install_deps = read("scripts/install-deps")
    count = build_list_length(install_deps)
    problems = [] if count else ["no build=( ... ) list in scripts/install-deps"]
    for where, text, pattern in (("README.md", readme, r"The demo installs (\d+) packages"),
                                 ("scripts/install-deps", install_deps, r"\(scripts/demo\): (\d+) packages")):
        found = re.search(pattern, text)
        if found is None:
            problems.append("%s no longer says how many packages the demo installs (%r)" % (where, pattern))
        elif count and int(found.group(1)) != count:
            problems.append("%s says %s packages; the build list has %d" % (where, found.group(1), count))
    results.check("the demo's package count, as stated, is the build list's (%s)" % count, problems)

    found = re.search(r"snapshot core of (\d+) KB in (\d+) KB of zstd", readme)
    example = os.path.join(TOP, "examples", "deadlock.core.zst")
    problems = [] if found else ["README.md no longer gives the example core's size"]
    if found and abs(os.path.getsize(example) / 1024 - int(found.group(2))) > 1:
        problems.append("compressed: README says %s KB, the file has %.1f" % (found.group(2), os.path.getsize(example) / 1024))
    if found and shutil.which("zstd"):
        whole = len(subprocess.run(["zstd", "-dc", example], stdout=subprocess.PIPE, check=True).stdout) / 1024
        if abs(whole - int(found.group(1))) > whole * 0.05:
            problems.append("whole: README says %s KB, the core is %.0f" % (found.group(1), whole))
    results.check("the example core's size, as README.md gives it", problems)

    # CONTRIBUTING states no time no test checks: a run's cost is in its own last line
    # (scripts/test-report). What may stand: CI's budget, and the fuzzers' seconds (a setting).
    contributing = read("CONTRIBUTING.md")
    allowed = {"45 minutes", "30 s"}
    stated = [match.group(0) for match in re.finditer(r"\b\d+(\.\d+)? ?(min|minutes|seconds|s)\b", contributing)
              if match.group(0) not in allowed]
    results.check("CONTRIBUTING.md states no measured time (%s)" % ", ".join(sorted(allowed)),
                  ["CONTRIBUTING.md states %r: measured times go in the run's output and the closing notes" % text
                   for text in stated])
    # Nor does README.md's prose: its examples (fenced blocks) show what a run printed, times
    # included; a sentence's figure would be a measurement no test keeps true.
    prose = re.sub(r"```.*?```", "", readme, flags=re.S)
    stated = [match.group(0) for match in re.finditer(r"\b\d+(\.\d+)?( ?[-–] ?\d+)? ?(min|minutes|seconds|s|ms)\b", prose)]
    results.check("README.md's prose states no measured time",
                  ["README.md states %r: measured times go in scripts/bench and the closing notes" % text
                   for text in stated])
    # Every fuzz target is named where the fuzzers are described.
    targets = sorted(name[:-len(".cpp")] for name in os.listdir(os.path.join(TOP, "fuzz"))
                     if name.startswith("fuzz_") and name.endswith(".cpp"))
    results.check("CONTRIBUTING.md names each of the %d fuzz targets" % len(targets),
                  ["%s is not named in CONTRIBUTING.md" % target for target in targets
                   if "`%s`" % target not in contributing])

    missing = []
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme):
        if not os.path.exists(os.path.join(TOP, target)):
            missing.append(target)
    results.check("every relative link of README.md names a file", missing)

    if args.coreanalyze and shutil.which("zstd"):
        import tempfile
        excerpt = demo_excerpt(readme)
        with tempfile.TemporaryDirectory(prefix="hangpy-docs-") as workdir:
            code, printed = demo_output(args.coreanalyze, workdir)
        problems = ["README.md no longer shows the demo's output"] if not excerpt else []
        if code != 0:
            problems.append("coreanalyze exited with %d on the example core" % code)
        if excerpt:
            problems += excerpt_problems(excerpt, printed)
        results.check("the demo's output as README.md shows it (%d lines)" % len(excerpt or []), problems)
    else:
        results.report("SKIP", "the demo's output as README.md shows it",
                       ["no --coreanalyze given" if not args.coreanalyze else "zstd is not installed"])
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
