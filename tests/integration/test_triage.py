#!/usr/bin/python3
"""Integration test: `coreanalyze triage` on a job of real processes (issue 11).

Four processes of one interpreter run tests/programs/triage_rank.py with RANK=0..3 in their
environment, as torchrun starts ranks; rank 2 is the odd one (in barrier(), the others in
all_reduce()), and every rank has two pool threads alike. Checked:

- `triage --pid ...` (live, in parallel): the verdict opens the text, its first line names the odd
  process by its PID (and by rank 2 once --json reports rank labels), its second the other 3 in
  all_reduce, and it
  folds the pool threads (x2); --json says the same; --html, --svg and --dot are written;
- the same job from cores (gcore) and from a directory of the processes' --json results;
- 1,024 ranks made from those real documents (triage_sets.py), one of them odd: the verdict names
  that rank, and the time is printed (goal < 2 s; scripts/bench measures it too);
- the HTML page in headless Chromium: the screenshot is not blank (skipped without chromium);
- an input that is no core among good ones: left out with one line, exit code 5; none good: 3.

Exit status: 0 passed, 1 failed, 77 no interpreter to run the processes with.
"""
import argparse
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
import interpreters  # noqa: E402
import triage_sets  # noqa: E402
from results import Results, SKIP  # noqa: E402

# Any one interpreter will do; the first installed of these runs the job.
CANDIDATES = ["debian-3.11", "pyenv-3.12", "pyenv-3.13", "pyenv-3.10"]
WORLD_SIZE = 4
ODD_RANK = 2
SCALE_COUNT = 1024
SCALE_ODD_RANK = 777
RUN_TIMEOUT = 120
EXIT_PARTIAL = 5
EXIT_BAD_INPUT = 3
EXIT_PICTURE_NOT_WRITTEN = 7


def run(argv, **kwargs):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT, **kwargs)


def start_job(interpreter, workdir):
    """The four ranks, each in its own work directory, with RANK etc. in its environment."""
    processes = []
    saved = dict(os.environ)
    try:
        for rank in range(WORLD_SIZE):
            os.environ.update({"RANK": str(rank), "WORLD_SIZE": str(WORLD_SIZE),
                               "LOCAL_RANK": str(rank), "TRIAGE_ODD_RANK": str(ODD_RANK)})
            rank_dir = os.path.join(workdir, "rank%d" % rank)
            os.makedirs(rank_dir)
            processes.append(cores.ScenarioProcess(interpreter, "triage_rank.py", rank_dir))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    for process in processes:
        process.wait_for_ground_truth()
    return processes


def verdict_problems(document, odd_pid, odd_rank, count):
    """What is wrong with a triage --json document of the job."""
    problems = []
    if document.get("verdict_kind") != "outliers":
        problems.append("verdict kind %r, not outliers: %s" % (document.get("verdict_kind"),
                                                              document.get("verdict")))
        return problems
    groups = document["groups"]
    sizes = [group["size"] for group in groups]
    if sizes != [count - 1, 1]:
        problems.append("group sizes %s, not [%d, 1]" % (sizes, count - 1))
        return problems
    odd = [p for p in document["processes"] if p["group"] == 1]
    if len(odd) != 1 or odd[0]["pid"] != odd_pid:
        problems.append("the odd group is %s, not PID %d" % (odd, odd_pid))
    verdict = document["verdict"]
    if "PID %d" % odd_pid not in verdict:
        problems.append("the verdict does not name PID %d: %s" % (odd_pid, verdict))
    ranks_known = all(p["rank"] is not None for p in document["processes"])
    if ranks_known and "rank %d (" % odd_rank not in verdict:
        problems.append("the verdict does not name rank %d: %s" % (odd_rank, verdict))
    lines = verdict.splitlines()
    if len(lines) < 2 or not lines[1].startswith("the other %d: " % (count - 1)) or \
            "in `all_reduce` at triage_rank.py" not in lines[1]:
        problems.append("the verdict's second line does not put the other %d in all_reduce: %s" % (count - 1, verdict))
    if not lines[0].startswith("the odd one out: ") or "PID %d" % odd_pid not in lines[0] or \
            "in `Event.wait` at triage_rank.py:23" not in lines[0]:
        problems.append("the verdict's first line is not the odd one in barrier's Event.wait: %s" % verdict)
    if not groups[1]["outlier"] or groups[0]["outlier"]:
        problems.append("outlier flags %s" % [g["outlier"] for g in groups])
    pool = [s for s in groups[0]["stacks"] if s["count"] == 2]
    if len(pool) != 1 or "pool_worker" not in [f["function"] for f in pool[0]["frames"]]:
        problems.append("the two pool threads are not folded into one stack x2: %s"
                        % [(s["count"], s["frames"][-1]["function"]) for s in groups[0]["stacks"]])
    return problems


def check_triage(results, label, coreanalyze, inputs, odd_pid, workdir, count=WORLD_SIZE,
                 odd_rank=ODD_RANK, pictures=False):
    argv = [coreanalyze, "triage"] + inputs
    result = run(argv + ["--json"])
    if result.returncode != 0:
        results.report("FAIL", label, ["exit code %d: %s" % (result.returncode, result.stderr.decode()[-500:])])
        return None
    document = json.loads(result.stdout)
    problems = verdict_problems(document, odd_pid, odd_rank, count)
    have_dot = shutil.which("dot") is not None
    picture_args = []
    if pictures:
        picture_args = ["--html", os.path.join(workdir, "triage.html"),
                        "--dot", os.path.join(workdir, "triage.dot")]
        if have_dot:
            picture_args += ["--svg", os.path.join(workdir, "triage.svg")]
        else:
            results.report("SKIP", "--svg", ["Graphviz's dot is not installed (apt-get install graphviz)"])
    text = run(argv + picture_args)
    lines = text.stdout.decode("utf-8", "replace").splitlines()
    verdict_lines = document["verdict"].splitlines()
    if text.returncode != 0 or lines[:len(verdict_lines)] != verdict_lines:
        problems.append("text: exit %d, first lines %r, not the verdict %r (%s)"
                        % (text.returncode, lines[:len(verdict_lines)], document["verdict"],
                           text.stderr.decode()[-300:]))
    if "<- outlier" not in "\n".join(lines):
        problems.append("the text tree marks no outlier")
    if pictures:
        for name in ("triage.html", "triage.dot") + (("triage.svg",) if have_dot else ()):
            path = os.path.join(workdir, name)
            if not os.path.exists(path) or os.path.getsize(path) == 0:
                problems.append("%s was not written" % name)
        if os.path.exists(os.path.join(workdir, "triage.svg")):
            with open(os.path.join(workdir, "triage.svg")) as svg:
                picture = html.unescape(svg.read())  # dot writes '-' as &#45;
            if "#d62728" not in picture or "s 0-1,3" not in picture:  # ranks or processes
                problems.append("the SVG shows no outlier in red or no rank set 0-1,3")
        # Without dot on PATH: one line that says what to install, exit code 7, the rest written.
        no_dot = run(argv + ["--svg", os.path.join(workdir, "nodot.svg")],
                     env=dict(os.environ, PATH="/nonexistent"))
        said = no_dot.stderr.decode("utf-8", "replace").strip().splitlines()
        if no_dot.returncode != EXIT_PICTURE_NOT_WRITTEN or len(said) != 1 or "graphviz" not in said[0]:
            problems.append("--svg without dot: exit %d, stderr %r" % (no_dot.returncode, said))
    results.check(label, problems)
    return document


def png_is_blank(path):
    """True when the PNG's pixels are all one colour (or it cannot be decoded): zlib and the
    PNG format (RFC 2083) in a few lines, no imaging library needed."""
    with open(path, "rb") as png:
        data = png.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return True
    position, idat, width, colour_type = 8, b"", 0, 0
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            width, colour_type = int.from_bytes(body[0:4], "big"), body[9]
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    raw = zlib.decompress(idat)
    channels = {2: 3, 6: 4, 0: 1, 4: 2}.get(colour_type, 4)
    stride = width * channels + 1
    # Filtered rows: distinct filtered bytes mean content; a blank page is constant rows.
    distinct_rows = set(raw[i:i + stride] for i in range(0, len(raw), stride))
    return len(distinct_rows) <= 2


def check_html_in_chromium(results, html, workdir):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        results.report("SKIP", "HTML page in headless Chromium", ["chromium is not installed (apt-get install chromium)"])
        return
    screenshot = os.path.join(workdir, "triage.png")
    profile = tempfile.mkdtemp(prefix="hangpy-chromium-")
    try:
        result = run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                      "--disable-background-networking", "--disable-component-update", "--disable-sync",
                      "--no-first-run", "--user-data-dir=" + profile, "--screenshot=" + screenshot,
                      "--window-size=1200,900", "file://" + html])
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    problems = []
    if not os.path.exists(screenshot):
        problems.append("no screenshot (exit %d): %s" % (result.returncode, result.stderr.decode()[-300:]))
    elif png_is_blank(screenshot):
        problems.append("the screenshot is blank")
    results.check("HTML page in headless Chromium (%s)" % screenshot, problems)


def check_scale(results, coreanalyze, majority_json, odd_json, workdir):
    with open(majority_json) as majority_file, open(odd_json) as odd_file:
        majority, odd = json.load(majority_file), json.load(odd_file)
    directory = os.path.join(workdir, "scale")
    triage_sets.write_set(majority, odd, SCALE_COUNT, SCALE_ODD_RANK, directory)
    started = time.perf_counter()
    result = run([coreanalyze, "triage", "--json", directory])
    elapsed = time.perf_counter() - started
    problems = []
    if result.returncode != 0:
        problems.append("exit code %d: %s" % (result.returncode, result.stderr.decode()[-300:]))
    else:
        document = json.loads(result.stdout)
        odd_pid = 100000 + SCALE_ODD_RANK
        problems = verdict_problems(document, odd_pid, SCALE_ODD_RANK, SCALE_COUNT)
        if "the other 1023: ranks 0-776,778-1023 in" not in document["verdict"]:
            problems.append("the verdict does not give the rank set 0-776,778-1023: %s" % document["verdict"])
        if "rank 777 (PID 100777 on node097)" not in document["verdict"]:
            problems.append("the verdict does not name rank 777 on node097: %s" % document["verdict"])
    results.check("1,024 ranks from real documents: the odd rank named (%.2f s; goal < 2 s)" % elapsed, problems)
    shutil.rmtree(directory, ignore_errors=True)


def check_bad_inputs(results, coreanalyze, good_json, workdir):
    junk = os.path.join(workdir, "not-a-core")
    with open(junk, "w") as out:
        out.write("hello\n")
    partial = run([coreanalyze, "triage", good_json, junk])
    problems = []
    if partial.returncode != EXIT_PARTIAL or b"left out" not in partial.stderr:
        problems.append("a junk input among good ones: exit %d, stderr %r" % (partial.returncode, partial.stderr[-300:]))
    none = run([coreanalyze, "triage", junk])
    if none.returncode != EXIT_BAD_INPUT:
        problems.append("only a junk input: exit %d, not %d" % (none.returncode, EXIT_BAD_INPUT))
    missing = run([coreanalyze, "triage", os.path.join(workdir, "no-such-file")])
    if missing.returncode != EXIT_BAD_INPUT or len(missing.stderr.decode().strip().splitlines()) != 1:
        problems.append("a missing input: exit %d, stderr %r" % (missing.returncode, missing.stderr))
    results.check("bad inputs: left out with one line (exit 5), none good (exit 3)", problems)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    coreanalyze = os.path.abspath(args.coreanalyze)
    results = Results()
    interpreter = next((i for i in map(interpreters.resolve, CANDIDATES) if i is not None), None)
    if interpreter is None or interpreter.root is not None:
        print("SKIP none of %s is installed" % ", ".join(CANDIDATES))
        return SKIP
    workdir = tempfile.mkdtemp(prefix="hangpy-triage-")
    processes = []
    try:
        processes = start_job(interpreter, workdir)
        pids = [p.pid for p in processes]
        odd_pid = pids[ODD_RANK]
        label = "%s, %d ranks" % (interpreter.name, WORLD_SIZE)
        check_triage(results, "triage --pid (live) " + label, coreanalyze,
                     ["--pid", ",".join(map(str, pids))], odd_pid, workdir, pictures=True)
        page = os.path.join(workdir, "triage.html")
        if os.path.exists(page):
            check_html_in_chromium(results, page, workdir)
        else:
            results.report("FAIL", "HTML page", ["%s was not written" % page])

        results_dir = os.path.join(workdir, "gathered", "node0")
        os.makedirs(results_dir)
        json_paths = []
        for rank, pid in enumerate(pids):
            path = os.path.join(results_dir, "rank%d.json" % rank)
            with open(path, "wb") as out:
                out.write(run([coreanalyze, "--json", "--pid", str(pid)]).stdout)
            json_paths.append(path)
        check_triage(results, "triage of a directory of --json results " + label, coreanalyze,
                     [os.path.join(workdir, "gathered")], odd_pid, workdir)

        core_paths = [p.take_core("gcore") for p in processes]
        check_triage(results, "triage of gcore cores " + label, coreanalyze, core_paths, odd_pid, workdir)
        for core in core_paths:
            os.unlink(core)

        check_scale(results, coreanalyze, json_paths[0], json_paths[ODD_RANK], workdir)
        check_bad_inputs(results, coreanalyze, json_paths[0], workdir)
    except cores.CoreError as error:
        results.report("FAIL", "the job", [str(error)])
    finally:
        for process in processes:
            process.kill()
        if args.keep:
            print("kept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
