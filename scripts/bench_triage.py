"""The triage rows of scripts/bench: `coreanalyze triage` of 1,024 --json documents and 64
snapshot cores of real processes, and at fleet size (10,000 and 100,000 real rank results)."""
import json
import os
import shutil
import statistics
import subprocess
import tempfile

import cores
from bench_runs import peak_rss_kib, timed_run

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


TRIAGE_RANKS = 1024
TRIAGE_CORES = 64
TRIAGE_RUNS = 5


def triage_lines(coreanalyze, interpreter):
    """`coreanalyze triage` at scale: 1,024 --json documents and 64 snapshot cores. The cores are
    of TRIAGE_CORES real processes of tests/programs/triage_rank.py (RANK=0..63, rank 32 the odd
    one), each taken with `coreanalyze --pid PID --json --snapshot FILE` as `collect --cores
    snapshot` takes them; the documents are two of those processes' (rank 0 and the odd rank)
    copied 1,024 times (tests/integration/triage_sets.py gives each copy its rank labels). Median
    wall and CPU time of TRIAGE_RUNS runs each (goals: < 2 s and < 10 s)."""
    import triage_sets
    lines = []
    workdir = tempfile.mkdtemp(prefix="hangpy-bench-triage-", dir="/var/tmp")
    processes = []
    saved = dict(os.environ)
    odd_rank = TRIAGE_CORES // 2
    try:
        for rank in range(TRIAGE_CORES):
            os.environ.update({"RANK": str(rank), "WORLD_SIZE": str(TRIAGE_CORES),
                               "TRIAGE_ODD_RANK": str(odd_rank)})
            rank_dir = os.path.join(workdir, "rank%d" % rank)
            os.makedirs(rank_dir)
            processes.append(cores.ScenarioProcess(interpreter, "triage_rank.py", rank_dir))
        os.environ.clear()
        os.environ.update(saved)
        core_dir = os.path.join(workdir, "cores")
        os.makedirs(core_dir)
        documents = {}
        for rank, process in enumerate(processes):
            process.wait_for_ground_truth()
            snapshot = os.path.join(core_dir, "%d.snapshot.core" % process.pid)
            run = subprocess.run([coreanalyze, "--pid", str(process.pid), "--json", "--snapshot",
                                  snapshot], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            if rank in (0, odd_rank):
                documents[rank] = json.loads(run.stdout)
        for process in processes:
            process.kill()
        json_dir = os.path.join(workdir, "json")
        triage_sets.write_set(documents[0], documents[odd_rank], TRIAGE_RANKS, TRIAGE_RANKS // 2,
                              json_dir)
        for label, directory in (("%d --json documents" % TRIAGE_RANKS, json_dir),
                                 ("%d snapshot cores of real processes" % TRIAGE_CORES, core_dir)):
            runs = [timed_run([coreanalyze, "triage", directory]) for _ in range(TRIAGE_RUNS)]
            runs = [run for run in runs if run is not None and run[2] == 0]
            if not runs:
                lines.append("triage of %s: failed" % label)
                continue
            lines.append("triage of %s: %.2f s wall, %.2f s CPU (median of %d); verdict: %s"
                         % (label, statistics.median(r[0] for r in runs),
                            statistics.median(r[1] for r in runs), len(runs),
                            runs[0][3].splitlines()[0]))
    except cores.CoreError as error:
        lines.append("triage: %s" % error)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        for process in processes:
            process.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    return lines


FLEET_CORPUS = os.path.join(REPO, "tests", "corpus", "jobs", "ddp-uneven-debian-3.11")
FLEET_RUNS = 3


def fleet_lines(coreanalyze, sizes, figures=None, key="this"):
    """`coreanalyze triage` at fleet size (issue 38's row: 10,000 results < 1 s wall, 100,000 < 10
    s and < 200 MB): the --json --locals documents of two real DDP ranks of the corpus (rank 0,
    where the others are, and rank 2, the odd one) copied into each size with their own rank
    labels (tests/integration/triage_sets.py). Median wall and CPU of FLEET_RUNS runs, and the
    peak RSS of one, also kept in `figures` (bench_goals.Figures) under (`key`, size)."""
    import triage_sets
    lines = []
    workdir = tempfile.mkdtemp(prefix="hangpy-bench-fleet-", dir="/var/tmp")
    try:
        documents = []
        for rank in (0, 2):
            run = subprocess.run([coreanalyze, "--json", "--locals",
                                  os.path.join(FLEET_CORPUS, "rank%d.core.zst" % rank)],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
            documents.append(json.loads(run.stdout))
        for size in sizes:
            directory = os.path.join(workdir, str(size))
            paths = triage_sets.write_set(documents[0], documents[1], size, size // 2, directory)
            megabytes = sum(os.path.getsize(path) for path in paths) / 1e6
            runs = [timed_run([coreanalyze, "triage", directory]) for _ in range(FLEET_RUNS)]
            runs = [run for run in runs if run is not None and run[2] == 0]
            if not runs:
                lines.append("triage of %d rank results: failed" % size)
                continue
            rss = peak_rss_kib([coreanalyze, "triage", directory])
            if figures is not None:
                figures.fleet[(key, size)] = (statistics.median(r[0] for r in runs),
                                              statistics.median(r[1] for r in runs), rss / 1024)
            lines.append("%striage of %d real rank results with locals (%.0f MB): %.2f s wall, %.2f s CPU "
                         "(median of %d), peak RSS %.0f MiB; verdict: %s"
                         % ("" if key == "this" else key + ": ", size, megabytes,
                            statistics.median(r[0] for r in runs),
                            statistics.median(r[1] for r in runs), len(runs), rss / 1024,
                            runs[0][3].splitlines()[0]))
            shutil.rmtree(directory, ignore_errors=True)
    except (OSError, subprocess.CalledProcessError, ValueError) as error:
        lines.append("fleet triage: %s" % error)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return lines
