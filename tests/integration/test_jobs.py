#!/usr/bin/python3
"""Integration test: whole hung jobs of real processes on this machine, collected and triaged
(issue 11), with Debian's python3-torch (gloo backend on loopback):

- torchrun --nproc_per_node=8 (static rendezvous at 127.0.0.1), rank 5 given one batch fewer
  (tests/programs/job_allreduce_hang.py): `coreanalyze collect --pid AGENT -o DIR` then
  `coreanalyze triage DIR` (the collector's manifest.json files are no inputs), `triage --pid`
  of the same processes (live), and `collect --cores snapshot` then triage of the snapshot cores:
  the verdict opens the text, its first line names rank 5 and the line where it waits, the next the other 7 in
  `all_reduce`; the torchrun agent is no odd rank; --json says the same; --html (self-contained,
  and a headless Chromium screenshot that is not blank), --svg and --dot are written;
- torch.multiprocessing.spawn with 4 ranks, rank 1 given one batch fewer: the verdict names
  that process as rank 1 (spawned ranks have no RANK in their environment: the index spawn passed
  them is their rank) and its place, the other 3 in
  `all_reduce`;
- a rank that returns before init_process_group (job_missing_rank.py), 4 ranks under torchrun and
  under torch.multiprocessing.spawn: the verdict's first line says rank 3 of 4 never joined and
  ranks 0-2 wait for it in `init_process_group` at the program's line, as the program wrote
  before it blocked (live, collected, and from snapshot cores alone); rank 0, which hosts the
  TCPStore, is no odd one out;
- a multiprocessing.Pool whose worker is killed (SIGKILL) while it runs a task of pool.map
  (job_pool_lost_task.py; Debian's 3.11, pyenv's 3.8 and 3.13): the verdict's first line says the
  task of `Pool.map` at the program's line is lost, the parent waits for its result and every
  worker of its pool waits for work (live, collected, snapshot cores);
- a parent in Popen.wait() whose child blocks writing to the full pipe the parent never reads
  (job_pipe_cycle.py; 3.11, 3.8, 3.13), live, from snapshot cores alone (their note of pipe
  ends, matched by inode) and from gcores alone (the parent's Popen object says it reads the
  child's stdout): the verdict's first line is the cycle, each process's wait with its place;
- a parent joining a child whose exit waits for its multiprocessing.Queue's feeder thread, blocked
  writing to the parent (job_queue_join.py; 3.11, 3.8, 3.13), live and from snapshot cores: the
  first line is the cycle, the child's side named by its feeder thread;
- a server stuck on a lock and its load client waiting for the answer (job_server_client.py;
  3.11, 3.8, 3.13), live and from snapshot cores: two processes no vote tells apart; the first
  line is the chain from the client's request, over the connection, to the server's handler
  thread and its lock, and the server alone is marked odd;
- DistributedDataParallel with 3 ranks under torch.multiprocessing.spawn, rank 2 given one batch
  fewer (job_ddp_uneven.py): the verdict's first line names rank 2 in barrier(), the next the
  other 2 in `backward` waiting for DDP's gradient all_reduce (native frames, without --native),
  and a line says they wait in different collectives that can never meet;
- gunicorn --preload with 3 sync workers, its app having used torch's OpenMP pool in the arbiter
  (gunicorn_torch_app.py): two requests hang two workers in the pool they lost at fork; the
  verdict's first line is those two, with the cause; the third worker, free, is idle, never odd;
- a DataLoader with 3 workers, worker 1 waiting on an Event nobody sets
  (job_dataloader_hang.py): the verdict names that DataLoader worker by its worker id and PID and
  its place, and the other workers, waiting for indices, idle;
- a pre-fork server of 4 workers (prefork_server.py; os.fork, as gunicorn does), worker 2 stuck
  on a lock: the verdict names that worker by PID and its place, and the other 3 idle in accept.

Every process started runs in a session of its own, killed as a whole; cores are deleted.
Exit status: 0 passed, 1 failed, 77 python3-torch (or Debian's python3) is not installed.
"""
import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import Results, SKIP  # noqa: E402
import test_collect  # noqa: E402  (torchrun's options, the torch jobs' environment)
import test_triage  # noqa: E402  (png_is_blank, the Chromium screenshot)
import interpreters  # noqa: E402
import cores as core_files  # noqa: E402  (gcore)

PROGRAMS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "programs")
PYTHON = "/usr/bin/python3"  # Debian's, which python3-torch is built for
RUN_TIMEOUT = 180
START_TIMEOUT = 180  # every rank imports torch (2 cores for 8 ranks) and meets the others
SETTLE_SECONDS = 1.0  # from a ready file to the call it announces
TORCHRUN_RANKS, TORCHRUN_ODD = 8, 5
SPAWN_RANKS, SPAWN_ODD = 4, 1
DATALOADER_STUCK = 1
DDP_RANKS, DDP_ODD = 3, 2
MISSING_RANKS, MISSING_RANK = 4, 3
PROCESS_INTERPRETERS = ("debian-3.11", "pyenv-3.8", "pyenv-3.13")
GUNICORN_WORKERS, GUNICORN_HUNG = 3, 2
PREFORK_STUCK = 2


def marker_line(program, marker):
    """The line number of the line of `program` that holds `marker` (the ground truth)."""
    with open(os.path.join(PROGRAMS, program)) as source:
        for number, line in enumerate(source, 1):
            if "# " + marker in line:
                return number
    raise RuntimeError("%s has no line marked %s" % (program, marker))


def program_constant(program, name):
    """The integer a module-level `NAME = N` line of `program` sets (the ground truth of a value)."""
    with open(os.path.join(PROGRAMS, program)) as source:
        for line in source:
            if line.startswith(name + " = "):
                return int(line.split("=", 1)[1].split("#", 1)[0])
    raise RuntimeError("%s sets no %s" % (program, name))


class Job(object):
    """A program running in a session of its own; its ready files say which process is which."""

    def __init__(self, argv, workdir, name, ready_in_environment=False):
        self.ready_dir = os.path.join(workdir, name + "-ready")
        os.makedirs(self.ready_dir)
        self.log = open(os.path.join(workdir, name + ".log"), "wb")
        environment = test_collect.torch_environment()
        if ready_in_environment:  # a program that takes no arguments of ours (a gunicorn app)
            environment["HANGPY_READY_DIR"] = self.ready_dir
        else:
            argv = (argv + [self.ready_dir] if "{ready}" not in argv else
                    [self.ready_dir if a == "{ready}" else a for a in argv])
        self.argv = argv
        self.process = subprocess.Popen(argv,
                                        start_new_session=True, stdout=self.log,
                                        stderr=subprocess.STDOUT, env=environment)
        self.pid = self.process.pid
        self.name = name

    def wait_ready(self, count, timeout=START_TIMEOUT):
        """{name: pid} once `count` processes have written their ready files."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            ready = self.ready()
            if len(ready) >= count:
                time.sleep(SETTLE_SECONDS)
                return self.ready()
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        self.log.flush()
        raise RuntimeError("%s: %d of %d processes ready (exit %s); its output:\n%s"
                           % (self.name, len(self.ready()), count, self.process.poll(),
                              test_collect.output_tail(self.log.name)))

    def ready(self):
        found = {}
        for path in glob.glob(os.path.join(self.ready_dir, "*.ready")):
            name, pid = os.path.basename(path)[:-len(".ready")].rsplit("-", 1)
            found[name] = int(pid)
        return found

    def kill(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()
        self.log.close()


def run(argv):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT)
    return result.returncode, result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace")


def collect(coreanalyze, pid, out_dir, extra=()):
    """coreanalyze collect --pid PID into out_dir/n: its problems and its seconds."""
    started = time.time()
    code, _, err = run([coreanalyze, "collect", "--pid", str(pid), "-o", out_dir, "--node-name", "n",
                        "--no-triage"] + list(extra))
    seconds = time.time() - started
    return ([] if code == 0 else ["collect: exit code %d: %s" % (code, err[-500:])]), seconds


def triage(coreanalyze, inputs, pictures=()):
    """(the --json document, the text's lines, problems, seconds) of `coreanalyze triage`."""
    problems = []
    started = time.time()
    code, out, err = run([coreanalyze, "triage", "--json"] + inputs)
    seconds = time.time() - started
    if code != 0:
        return None, [], ["triage --json %s: exit code %d: %s" % (" ".join(inputs), code, err[-500:])], seconds
    if "left out" in err or "skipped" in err:
        problems.append("triage %s left something out: %s" % (" ".join(inputs), err[-500:]))
    document = json.loads(out)
    code, out, err = run([coreanalyze, "triage"] + inputs + list(pictures))
    lines = out.splitlines()
    verdict_lines = document["verdict"].splitlines()
    if code != 0 or lines[:len(verdict_lines)] != verdict_lines:
        problems.append("text: exit %d, first lines %r, not the verdict %r (%s)"
                        % (code, lines[:len(verdict_lines)], document["verdict"], err[-300:]))
    return document, lines, problems, seconds


def verdict_problems(document, want_in_verdict, odd_pid, count):
    """The verdict holds every string of `want_in_verdict`, and exactly one process, `odd_pid`,
    is in an outlier group; `count` processes were triaged."""
    if document is None:
        return []
    problems = []
    verdict = document["verdict"]
    for want in want_in_verdict:
        if want not in verdict:
            problems.append("the verdict lacks %r: %s" % (want, verdict))
    # The odd one comes first.
    if "PID %d" % odd_pid not in verdict.splitlines()[0]:
        problems.append("the verdict's first line is not PID %d: %s" % (odd_pid, verdict))
    outlier_groups = set(index for index, group in enumerate(document["groups"]) if group["outlier"])
    outliers = [p["pid"] for p in document["processes"] if p["group"] in outlier_groups]
    if outliers != [odd_pid]:
        problems.append("outlier processes %s, not [%d]: %s" % (outliers, odd_pid, verdict))
    if len(document["processes"]) != count:
        problems.append("%d processes triaged, not %d" % (len(document["processes"]), count))
    return problems


def pids_of(directory):
    return sorted(int(os.path.basename(p).split(".")[0])
                  for p in glob.glob(os.path.join(directory, "n", "*.json")) if os.path.basename(p)[0].isdigit())


def pictures_case(results, coreanalyze, directory, workdir):
    """--html, --svg and --dot of a triage; the page needs nothing from the network and shows
    something in headless Chromium."""
    html, svg, dot = (os.path.join(workdir, "job." + ext) for ext in ("html", "svg", "dot"))
    code, _, err = run([coreanalyze, "triage", directory, "--html", html, "--svg", svg, "--dot", dot])
    problems = [] if code == 0 else ["exit code %d: %s" % (code, err[-300:])]
    for path in (html, svg, dot):
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            problems.append("%s was not written" % path)
    if os.path.exists(html):
        with open(html) as page:
            text = page.read()
        for remote in ("src=\"http", "href=\"http", "src='http", "@import", "url(http"):
            if remote in text:
                problems.append("the HTML page fetches something: %s" % remote)
        if "job_allreduce_hang.py" not in text:
            problems.append("the HTML page does not show the program's frames")
    if os.path.exists(dot):
        with open(dot) as graph:
            if "all_reduce" not in graph.read():
                problems.append("the DOT graph has no all_reduce")
    results.check("torchrun 8 ranks: --html, --svg, --dot written", problems)
    if os.path.exists(html):
        test_triage.check_html_in_chromium(results, html, workdir)


def worker_problems(out_dir, ranks, names):
    """Each named rank's collective is run by gloo's worker thread, which waits for a peer: its
    collected document names that worker."""
    problems = []
    for name in names:
        with open(os.path.join(out_dir, "n", "%d.json" % ranks[name])) as stream:
            rank_document = json.load(stream)
        main = [t for t in rank_document["threads"] if (t.get("state") or {}).get("main_thread")]
        blocked = (main[0].get("blocked_on") or {}) if main else {}
        if not blocked.get("worker_native_thread_id") or "peer" not in (blocked.get("worker_waits") or ""):
            problems.append("%s: its collective's gloo worker is not named: %r" % (name, blocked))
    return problems


def torchrun_case(results, coreanalyze, workdir):
    line = marker_line("job_allreduce_hang.py", "ODD-RANK-WAITS")
    torchrun = shutil.which("torchrun")
    # Every address 127.0.0.1, none a name to resolve (see test_collect.torchrun_argv).
    job = Job(test_collect.torchrun_argv(torchrun, TORCHRUN_RANKS,
                                         os.path.join(workdir, "torchrun-logs"))
              + [os.path.join(PROGRAMS, "job_allreduce_hang.py"), "{ready}", str(TORCHRUN_ODD)],
              workdir, "torchrun")
    try:
        started = time.time()
        ranks = job.wait_ready(TORCHRUN_RANKS)
        print("     (torchrun: %d ranks ready in %.1f s)" % (len(ranks), time.time() - started))
        odd_pid = ranks["rank%d" % TORCHRUN_ODD]
        wants = ["rank %d (PID %d" % (TORCHRUN_ODD, odd_pid), "job_allreduce_hang.py:%d" % line,
                 "the other 7: ranks 0-4,6-7 in `all_reduce`"]
        out_dir = os.path.join(workdir, "torchrun-collected")
        problems, collect_seconds = collect(coreanalyze, job.pid, out_dir)
        collected = pids_of(out_dir)
        if job.pid not in collected or not set(ranks.values()) <= set(collected):
            problems.append("collected %s: want the agent %d and the ranks %s" % (collected, job.pid, sorted(ranks.values())))
        document, lines, more, seconds = triage(coreanalyze, [out_dir])
        problems += more + verdict_problems(document, wants, odd_pid, len(collected))
        # The 7 in all_reduce: the gloo worker running it named (a job the wording was not made on).
        problems += worker_problems(out_dir, ranks, ["rank%d" % rank for rank in range(TORCHRUN_RANKS)
                                                     if rank != TORCHRUN_ODD])
        if document is not None:
            agents = [p for p in document["processes"] if p["pid"] == job.pid]
            if not agents or agents[0].get("role") != "elastic agent":
                problems.append("the torchrun agent: %s" % agents)
            # The agent has a part of its own in the verdict, as what it is, not as an odd rank.
            for part in document["verdict"].splitlines():
                if "PID %d" % job.pid in part and "[elastic agent]" not in part:
                    problems.append("the verdict names the agent as no agent: %s" % part)
        verdict = document["verdict"] if document else ""
        results.check("torchrun 8 ranks: collect (%.1f s) + triage DIR (%.2f s): %s"
                      % (collect_seconds, seconds, verdict), problems)
        if document is not None:
            print("\n".join("     | " + text for text in lines[:40]))

        document, _, problems, seconds = triage(
            coreanalyze, ["--pid", ",".join(str(pid) for pid in [job.pid] + sorted(ranks.values()))])
        problems += verdict_problems(document, wants, odd_pid, TORCHRUN_RANKS + 1)
        results.check("torchrun 8 ranks: triage --pid (live, %.2f s): %s"
                      % (seconds, document["verdict"] if document else ""), problems)

        pictures_case(results, coreanalyze, out_dir, workdir)

        cores_dir = os.path.join(workdir, "torchrun-snapshots")
        problems, collect_seconds = collect(coreanalyze, job.pid, cores_dir, ["--cores", "snapshot"])
        cores = sorted(glob.glob(os.path.join(cores_dir, "n", "*.snapshot.core")))
        if len(cores) != len(collected):
            problems.append("%d snapshot cores, want %d" % (len(cores), len(collected)))
        if glob.glob(os.path.join(cores_dir, "n", ".*")):
            problems.append("temporary files left: %s" % glob.glob(os.path.join(cores_dir, "n", ".*")))
        document, _, more, seconds = triage(coreanalyze, cores)
        # A snapshot keeps no page of the environment (it may hold secrets), but a note of the
        # rank labels: the cores alone name rank 5 (a core knows no host name).
        problems += more + verdict_problems(document, ["rank %d (PID %d)" % (TORCHRUN_ODD, odd_pid)] + wants[1:],
                                            odd_pid, len(cores))
        if document is not None:
            if any(p["rank"] is None for p in document["processes"] if p["pid"] != job.pid):
                problems.append("ranks without their RANK label in the snapshot cores: %s"
                                % [(p["pid"], p["rank"]) for p in document["processes"]])
        results.check("torchrun 8 ranks: collect --cores snapshot (%.1f s, %.1f MB) + triage of "
                      "the cores (%.2f s): %s" % (collect_seconds, sum(map(os.path.getsize, cores)) / 1e6,
                                                  seconds, document["verdict"] if document else ""), problems)
        # The directory holds a JSON and a snapshot core of each process: each process once.
        document, _, problems, seconds = triage(coreanalyze, [cores_dir])
        problems += verdict_problems(document, wants, odd_pid, len(collected))
        results.check("torchrun 8 ranks: triage of a --cores snapshot directory (%.2f s)" % seconds, problems)
        shutil.rmtree(cores_dir, ignore_errors=True)
    finally:
        job.kill()


def spawn_case(results, coreanalyze, workdir):
    line = marker_line("job_allreduce_hang.py", "ODD-RANK-WAITS")
    job = Job([PYTHON, os.path.join(PROGRAMS, "job_allreduce_hang.py"), "--spawn", str(SPAWN_RANKS),
               "{ready}", str(SPAWN_ODD)], workdir, "spawn")
    try:
        ranks = job.wait_ready(SPAWN_RANKS)
        odd_pid = ranks["rank%d" % SPAWN_ODD]
        out_dir = os.path.join(workdir, "spawn-collected")
        problems, collect_seconds = collect(coreanalyze, job.pid, out_dir)
        document, _, more, seconds = triage(coreanalyze, [out_dir])
        wants = ["rank %d (PID %d" % (SPAWN_ODD, odd_pid), "job_allreduce_hang.py:%d" % line,
                 "the other 3: ranks 0,2-3 in `all_reduce`"]
        problems += more + verdict_problems(document, wants, odd_pid, len(pids_of(out_dir)))
        results.check("mp.spawn 4 ranks: collect (%.1f s) + triage DIR (%.2f s): %s"
                      % (collect_seconds, seconds, document["verdict"] if document else ""), problems)
    finally:
        job.kill()


def gone_ranks(job):
    """{rank: its ground truth} of the ranks that wrote they leave without joining."""
    found = {}
    for path in glob.glob(os.path.join(job.ready_dir, "*.gone")):
        with open(path) as stream:
            truth = json.load(stream)
        found[truth["rank"]] = truth
    return found


def absent_rank_problems(document, job, present):
    """The verdict's first line names the rank that never joined and the ranks waiting for it
    (as each wrote before it blocked), no process is an odd one out for hosting the store, and
    --json's absent_ranks and world_size say the same."""
    if document is None:
        return []
    truths = {}
    for path in glob.glob(os.path.join(job.ready_dir, "*.ready")):
        with open(path) as stream:
            truth = json.load(stream)
        truths[truth["rank"]] = truth
    gone = gone_ranks(job)
    problems = []
    if sorted(truths) != sorted(present) or not gone:
        return ["ground truth: ranks ready %s, gone %s" % (sorted(truths), sorted(gone))]
    world_size = set(truth["world_size"] for truth in list(truths.values()) + list(gone.values()))
    waited_for = sorted(set(rank for truth in truths.values() for rank in truth["waits_for_ranks"]))
    line = marker_line("job_missing_rank.py", "JOIN-WAITS")
    absent = ",".join(str(rank) for rank in waited_for)
    want = ("rank %s of %d never joined: ranks %d-%d wait for it in `init_process_group` at "
            "job_missing_rank.py:%d; no process of rank %s is among the %d triaged"
            % (absent, max(world_size), min(present), max(present), line, absent,
               len(document["processes"])))
    first = document["verdict"].splitlines()[0]
    if first != want:
        problems.append("first line %r, want %r" % (first, want))
    if document.get("absent_ranks") != waited_for or document.get("world_size") != max(world_size):
        problems.append("absent_ranks %r, world_size %r; want %r of %d"
                        % (document.get("absent_ranks"), document.get("world_size"), waited_for,
                           max(world_size)))
    odd = [p["pid"] for p in document["processes"]
           if document["groups"][p["group"]]["outlier"]]
    if odd:
        problems.append("processes called odd for what is no cause: %s" % odd)
    if "MASTER_ADDR" in document["verdict"]:
        problems.append("the verdict sends the user to the network: %s" % document["verdict"])
    return problems


def missing_rank_case(results, coreanalyze, workdir):
    """A rank returns before init_process_group (job_missing_rank.py): under torchrun (WORLD_SIZE
    in the environment) and torch.multiprocessing.spawn (the world_size given to
    init_process_group), live and from snapshot cores alone."""
    program = os.path.join(PROGRAMS, "job_missing_rank.py")
    present = [rank for rank in range(MISSING_RANKS) if rank != MISSING_RANK]
    torchrun = shutil.which("torchrun")
    launches = (("torchrun", test_collect.torchrun_argv(torchrun, MISSING_RANKS,
                                                       os.path.join(workdir, "missing-logs"))
                 + [program, "{ready}", str(MISSING_RANK)]),
                ("spawn", [PYTHON, program, "--spawn", str(MISSING_RANKS), "{ready}", str(MISSING_RANK)]))
    for launcher, argv in launches:
        job = Job(argv, workdir, "missing-" + launcher)
        try:
            ranks = job.wait_ready(len(present))
            deadline = time.time() + START_TIMEOUT
            while not gone_ranks(job) and time.time() < deadline:
                time.sleep(0.2)
            time.sleep(SETTLE_SECONDS)
            out_dir = os.path.join(workdir, "missing-%s-collected" % launcher)
            problems, collect_seconds = collect(coreanalyze, job.pid, out_dir)
            document, _, more, seconds = triage(coreanalyze, [out_dir])
            problems += more + absent_rank_problems(document, job, present)
            results.check("%s, rank %d of %d never joins: collect + triage DIR: %s"
                          % (launcher, MISSING_RANK, MISSING_RANKS,
                             document["verdict"] if document else ""), problems)
            document, _, problems, seconds = triage(
                coreanalyze, ["--pid", ",".join(str(pid) for pid in [job.pid] + sorted(ranks.values()))])
            problems += absent_rank_problems(document, job, present)
            results.check("%s, rank %d never joins: triage --pid (live)" % (launcher, MISSING_RANK), problems)
            cores_dir = os.path.join(workdir, "missing-%s-snapshots" % launcher)
            problems, _ = collect(coreanalyze, job.pid, cores_dir, ["--cores", "snapshot"])
            cores = sorted(glob.glob(os.path.join(cores_dir, "n", "*.snapshot.core")))
            document, _, more, seconds = triage(coreanalyze, cores)
            problems += more + absent_rank_problems(document, job, present)
            results.check("%s, rank %d never joins: triage of the snapshot cores alone"
                          % (launcher, MISSING_RANK), problems)
            shutil.rmtree(cores_dir, ignore_errors=True)
        finally:
            job.kill()


def lost_task_problems(document, job, pids):
    """The verdict's first line says the pool.map task is lost, names the parent that waits (as
    it wrote before it blocked) and the pool's workers now there, every one waiting for work."""
    if document is None:
        return []
    parents = glob.glob(os.path.join(job.ready_dir, "parent-*.ready"))
    gone = glob.glob(os.path.join(job.ready_dir, "worker-*.gone"))
    if len(parents) != 1 or len(gone) != 1:
        return ["ground truth: %s, %s" % (parents, gone)]
    with open(parents[0]) as stream:
        truth = json.load(stream)
    parent_pid = int(parents[0].rsplit("-", 1)[1].split(".")[0])
    dead_pid = int(gone[0].rsplit("-", 1)[1].split(".")[0])
    index = dict((p["pid"], p["index"]) for p in document["processes"])
    workers = sorted(index[pid] for pid in pids if pid != parent_pid and pid in index)
    if len(workers) != truth["workers"] or dead_pid in index:
        return ["processes triaged %s: want the parent %d and %d live workers, not %d"
                % (sorted(index), parent_pid, truth["workers"], dead_pid)]
    # The method as the interpreter names it: "Pool.map" from 3.11 on (co_qualname), "map" before.
    wants = ["a task of `%s` at job_pool_lost_task.py:%d is lost: process %d (PID %d"
             % (function, marker_line("job_pool_lost_task.py", "MAP-WAITS"), index[parent_pid],
                parent_pid) for function in ("Pool." + truth["waits_in"], truth["waits_in"])]
    first = document["verdict"].splitlines()[0]
    want = wants[0]
    problems = []
    if not any(first.startswith(want) for want in wants):
        problems.append("first line %r, want it to start %r" % (first, want))
    workers_text = "processes %d-%d" % (workers[0], workers[-1]) if workers[-1] == workers[0] + len(workers) - 1 \
        else "processes " + ",".join(map(str, workers))
    if not first.endswith("waits for its result, and every worker of its pool (%s) waits for work" % workers_text):
        problems.append("first line %r does not name the workers %s" % (first, workers_text))
    return problems


def lost_task_case(results, coreanalyze, workdir):
    """A multiprocessing.Pool's worker killed mid-task (job_pool_lost_task.py): pool.map waits for
    ever, every worker waits for work. Debian's Python and pyenv's 3.8 and 3.13 where installed."""
    program = os.path.join(PROGRAMS, "job_pool_lost_task.py")
    for name, interpreter in interpreters.each_installed(PROCESS_INTERPRETERS, results):
        job = Job([interpreter.executable, program, "{ready}"], workdir, "pool-" + name)
        try:
            job.wait_ready(1)
            deadline = time.time() + START_TIMEOUT
            while not glob.glob(os.path.join(job.ready_dir, "*.gone")) and time.time() < deadline:
                time.sleep(0.1)
            # Pool replaces the dead worker within its handler's 0.1 s poll.
            time.sleep(SETTLE_SECONDS)
            out_dir = os.path.join(workdir, "pool-%s-collected" % name)
            problems, _ = collect(coreanalyze, job.pid, out_dir)
            pids = pids_of(out_dir)
            document, _, more, _ = triage(coreanalyze, [out_dir])
            problems += more + lost_task_problems(document, job, pids)
            results.check("%s: a Pool worker killed mid-task: collect + triage DIR: %s"
                          % (name, document["verdict"].splitlines()[0] if document else ""), problems)
            document, _, problems, _ = triage(coreanalyze, ["--pid", ",".join(map(str, pids))])
            problems += lost_task_problems(document, job, pids)
            results.check("%s: a Pool worker killed mid-task: triage --pid (live)" % name, problems)
            cores_dir = os.path.join(workdir, "pool-%s-snapshots" % name)
            problems, _ = collect(coreanalyze, job.pid, cores_dir, ["--cores", "snapshot"])
            cores = sorted(glob.glob(os.path.join(cores_dir, "n", "*.snapshot.core")))
            document, _, more, _ = triage(coreanalyze, cores)
            problems += more + lost_task_problems(document, job, pids)
            results.check("%s: a Pool worker killed mid-task: the snapshot cores alone" % name, problems)
            shutil.rmtree(cores_dir, ignore_errors=True)
        finally:
            job.kill()


def pipe_cycle_problems(document, job):
    """The verdict's first line states the cycle: the parent waits in Popen.wait for the child
    (as it wrote before it blocked), the child writes to the pipe only the parent reads."""
    if document is None:
        return []
    truths = {}
    for path in glob.glob(os.path.join(job.ready_dir, "*.ready")):
        name, pid = os.path.basename(path)[:-len(".ready")].rsplit("-", 1)
        with open(path) as stream:
            truths[name] = (int(pid), json.load(stream))
    if sorted(truths) != ["child", "parent"] or truths["parent"][1]["child_pid"] != truths["child"][0]:
        return ["ground truth: %s" % truths]
    index = dict((p["pid"], p["index"]) for p in document["processes"])
    parent_pid, child_pid = truths["parent"][0], truths["child"][0]
    if parent_pid not in index or child_pid not in index:
        return ["processes triaged %s, want the parent %d and its child %d" % (sorted(index), parent_pid, child_pid)]
    parent, child = index[parent_pid], index[child_pid]
    first = document["verdict"].splitlines()[0]
    # The parent and child in the cycle's order (the smaller index first), each with its place.
    # The method as the interpreter names it: "Popen.wait" from 3.11 on, "wait" before.
    parent_waits = ("process %d (PID %d%%s) waits in `%%s` at job_pipe_cycle.py:%d for process %d to exit"
                    % (parent, parent_pid, marker_line("job_pipe_cycle.py", "PARENT-WAITS"), child))
    child_writes = ("process %d (PID %d%%s) writes in `child` at job_pipe_cycle.py:%d to a pipe only process %d reads"
                    % (child, child_pid, marker_line("job_pipe_cycle.py", "CHILD-WRITES"), parent))
    problems = []
    for suffix in ("", " on %s" % os.uname()[1]):
        for method in ("Popen.wait", "wait"):
            waits = [parent_waits % (suffix, method), child_writes % suffix]
            if parent > child:
                waits.reverse()
            if first == "each waits for the other: " + "; ".join(waits):
                return []
    problems.append("first line %r, want %r" % (first, "each waits for the other: " + "; ".join(
        [parent_waits % (" on HOST", "Popen.wait"), child_writes % " on HOST"])))
    return problems


def pipe_cycle_case(results, coreanalyze, workdir):
    """A parent in Popen.wait() whose child blocks writing to the full pipe the parent never reads
    (job_pipe_cycle.py), live (/proc says who holds the pipe's read end) and from snapshot cores. Debian's Python and
    pyenv's 3.8 and 3.13 where installed."""
    program = os.path.join(PROGRAMS, "job_pipe_cycle.py")
    for name, interpreter in interpreters.each_installed(PROCESS_INTERPRETERS, results):
        job = Job([interpreter.executable, program, "{ready}"], workdir, "pipe-" + name)
        try:
            job.wait_ready(2)
            out_dir = os.path.join(workdir, "pipe-%s-collected" % name)
            problems, _ = collect(coreanalyze, job.pid, out_dir)
            document, _, more, _ = triage(coreanalyze, [out_dir])
            problems += more + pipe_cycle_problems(document, job)
            results.check("%s: Popen.wait() and a child writing the pipe: collect + triage DIR: %s"
                          % (name, document["verdict"].splitlines()[0] if document else ""), problems)
            document, _, problems, _ = triage(coreanalyze, ["--pid", ",".join(map(str, pids_of(out_dir)))])
            problems += pipe_cycle_problems(document, job)
            results.check("%s: Popen.wait() and a child writing the pipe: triage --pid (live)" % name, problems)
            # A core holds no descriptor table: the snapshot's note of pipe ends does, and the
            # triage matches the pipe's two ends by its inode.
            cores_dir = os.path.join(workdir, "pipe-%s-snapshots" % name)
            problems, _ = collect(coreanalyze, job.pid, cores_dir, ["--cores", "snapshot"])
            cores = sorted(glob.glob(os.path.join(cores_dir, "*", "*.snapshot.core")))
            document, _, more, _ = triage(coreanalyze, cores)
            problems += more + pipe_cycle_problems(document, job)
            results.check("%s: Popen.wait() and a child writing the pipe: the snapshot cores alone" % name, problems)
            shutil.rmtree(cores_dir, ignore_errors=True)
            # gdb's gcore holds no descriptor table at all: the parent's Popen object (stdout=PIPE)
            # says it reads the child's fd 1.
            ready = job.ready()
            gcores = [core_files.gcore(ready[role], os.path.join(workdir, "pipe-%s-%s.core" % (name, role)))
                      for role in ("parent", "child")]
            document, _, more, _ = triage(coreanalyze, gcores)
            results.check("%s: Popen.wait() and a child writing the pipe: gcores alone" % name,
                          more + pipe_cycle_problems(document, job))
            for path in gcores:
                os.unlink(path)
        finally:
            job.kill()


def queue_join_problems(document, job):
    """The verdict's first line states the cycle: the parent joins the child (as it wrote before
    it blocked), the child's queue feeder thread writes to the pipe only the parent reads."""
    if document is None:
        return []
    truths = {}
    for path in glob.glob(os.path.join(job.ready_dir, "*.ready")):
        name, pid = os.path.basename(path)[:-len(".ready")].rsplit("-", 1)
        with open(path) as stream:
            truths[name] = (int(pid), json.load(stream))
    if sorted(truths) != ["child", "parent"] or truths["parent"][1]["child_pid"] != truths["child"][0]:
        return ["ground truth: %s" % truths]
    index = dict((p["pid"], p["index"]) for p in document["processes"])
    parent_pid, child_pid = truths["parent"][0], truths["child"][0]
    if parent_pid not in index or child_pid not in index:
        return ["processes triaged %s, want the parent %d and its child %d" % (sorted(index), parent_pid, child_pid)]
    first = document["verdict"].splitlines()[0]
    line = marker_line("job_queue_join.py", "PARENT-JOINS")
    wants = ["each waits for the other: ",
             "process %d (PID %d" % (index[parent_pid], parent_pid),
             "join` at job_queue_join.py:%d for process %d to exit" % (line, index[child_pid]),
             "process %d (PID %d" % (index[child_pid], child_pid),
             "'s thread \"QueueFeederThread\" writes in `",
             "to a pipe only process %d reads" % index[parent_pid]]
    missing = [want for want in wants if want not in first]
    return ["first line %r lacks %r" % (first, missing)] if missing or not first.startswith(wants[0]) else []


def queue_join_case(results, coreanalyze, workdir):
    """A parent joining a child whose exit waits for its queue's feeder thread, blocked writing
    to the parent (job_queue_join.py): live and from snapshot cores alone. Debian's Python and
    pyenv's 3.8 and 3.13 where installed."""
    program = os.path.join(PROGRAMS, "job_queue_join.py")
    for name, interpreter in interpreters.each_installed(PROCESS_INTERPRETERS, results):
        job = Job([interpreter.executable, program, "{ready}"], workdir, "queue-" + name)
        try:
            job.wait_ready(2)
            out_dir = os.path.join(workdir, "queue-%s-collected" % name)
            problems, _ = collect(coreanalyze, job.pid, out_dir)
            document, _, more, _ = triage(coreanalyze, [out_dir])
            problems += more + queue_join_problems(document, job)
            results.check("%s: join() of a child whose queue feeder writes to the parent: collect + triage DIR: %s"
                          % (name, document["verdict"].splitlines()[0] if document else ""), problems)
            cores_dir = os.path.join(workdir, "queue-%s-snapshots" % name)
            problems, _ = collect(coreanalyze, job.pid, cores_dir, ["--cores", "snapshot"])
            cores = sorted(glob.glob(os.path.join(cores_dir, "*", "*.snapshot.core")))
            document, _, more, _ = triage(coreanalyze, cores)
            problems += more + queue_join_problems(document, job)
            results.check("%s: join() of a child whose queue feeder writes to the parent: the snapshot cores alone"
                          % name, problems)
            shutil.rmtree(cores_dir, ignore_errors=True)
        finally:
            job.kill()


def server_client_problems(document, job):
    """The verdict's first line is the chain from the client to the server: the client waits at
    its request's line on a connection only the server holds, and it ends at the server's handler
    thread (named as it wrote) waiting at its lock's line; the vote's "no single odd one out" is
    gone, and --json marks the server, not the client, as the odd one."""
    if document is None:
        return []
    ready = job.ready()
    truths = {}
    for path in glob.glob(os.path.join(job.ready_dir, "*.ready")):
        name = os.path.basename(path).rsplit("-", 1)[0]
        with open(path) as stream:
            truths[name] = json.load(stream)
    if sorted(ready) != ["client", "handler", "server"]:
        return ["ground truth: %s" % sorted(ready)]
    index = dict((p["pid"], p["index"]) for p in document["processes"])
    server_pid, client_pid = ready["server"], ready["client"]
    if server_pid not in index or client_pid not in index:
        return ["processes triaged %s, want the server %d and the client %d" % (sorted(index), server_pid, client_pid)]
    first = document["verdict"].splitlines()[0]
    wants = ["wait chain: process %d (PID %d" % (index[client_pid], client_pid),
             "waits in `urlopen` at job_server_client.py:%d on a connection whose other end only process %d holds"
             % (marker_line("job_server_client.py", "CLIENT-WAITS"), index[server_pid]),
             "where it ends: process %d (PID %d" % (index[server_pid], server_pid),
             "'s thread \"%s\" in `" % truths["handler"]["thread"],
             "do_GET` at job_server_client.py:%d, waiting for Lock " % marker_line("job_server_client.py", "HANDLER-WAITS")]
    problems = ["first line %r lacks %r" % (first, want) for want in wants if want not in first]
    if "no single odd one out" in document["verdict"]:
        problems.append("the verdict still votes: %r" % document["verdict"])
    odd = [p["pid"] for p in document["processes"] if document["groups"][p["group"]]["outlier"]]
    if odd != [server_pid]:
        problems.append("processes marked odd %s, want the server %d alone" % (odd, server_pid))
    return problems


def server_client_case(results, coreanalyze, workdir):
    """A server stuck on a lock and its client waiting for the answer (job_server_client.py), two
    processes no vote tells apart: live and from snapshot cores alone (their notes of connected
    sockets). Debian's Python and pyenv's 3.8 and 3.13 where installed."""
    program = os.path.join(PROGRAMS, "job_server_client.py")
    for name, interpreter in interpreters.each_installed(PROCESS_INTERPRETERS, results):
        job = Job([interpreter.executable, program, "{ready}"], workdir, "server-" + name)
        try:
            ready = job.wait_ready(3)
            pids = "%d,%d" % (ready["server"], ready["client"])
            document, _, problems, _ = triage(coreanalyze, ["--pid", pids])
            problems += server_client_problems(document, job)
            results.check("%s: a server stuck on a lock and its client: triage --pid (live): %s"
                          % (name, document["verdict"].splitlines()[0] if document else ""), problems)
            cores_dir = os.path.join(workdir, "server-%s-snapshots" % name)
            problems, _ = collect(coreanalyze, pids, cores_dir, ["--cores", "snapshot"])
            cores = sorted(glob.glob(os.path.join(cores_dir, "*", "*.snapshot.core")))
            document, _, more, _ = triage(coreanalyze, cores)
            problems += more + server_client_problems(document, job)
            results.check("%s: a server stuck on a lock and its client: the snapshot cores alone" % name, problems)
            shutil.rmtree(cores_dir, ignore_errors=True)
        finally:
            job.kill()


def ddp_case(results, coreanalyze, workdir):
    """DDP with uneven batches: the odd rank in barrier(), the others in DDP's backward."""
    backward = marker_line("job_ddp_uneven.py", "DDP-BACKWARD")
    barrier = marker_line("job_ddp_uneven.py", "ODD-RANK-BARRIER")
    ddp_batches = program_constant("job_ddp_uneven.py", "BATCHES")
    job = Job([PYTHON, os.path.join(PROGRAMS, "job_ddp_uneven.py")], workdir, "ddp")
    try:
        ranks = job.wait_ready(DDP_RANKS)
        time.sleep(SETTLE_SECONDS)
        odd_pid = ranks["rank%d" % DDP_ODD]
        out_dir = os.path.join(workdir, "ddp-collected")
        problems, collect_seconds = collect(coreanalyze, job.pid, out_dir)
        document, _, more, seconds = triage(coreanalyze, [out_dir])
        wants = ["the odd one out: rank %d (PID %d" % (DDP_ODD, odd_pid), "job_ddp_uneven.py:%d" % barrier,
                 "the other 2: ranks 0-1 in `",  # `Tensor.backward` from 3.11 (qualified names), else `backward`
                 "backward` at job_ddp_uneven.py:%d, waiting for DDP's gradient all_reduce in backward()" % backward,
                 "they wait in different collectives",
                 # The program's own variables in the loop all ranks run: the odd rank's batch count.
                 "in `run` at job_ddp_uneven.py, which all run: rank %d: batches = %d, batch = %d; "
                 "others: batches = %d, batch = %d" % (DDP_ODD, ddp_batches - 1, ddp_batches - 2, ddp_batches,
                                                       ddp_batches - 1)]
        problems += more + verdict_problems(document, wants, odd_pid, len(pids_of(out_dir)))
        problems += worker_problems(out_dir, ranks, ["rank%d" % rank for rank in range(DDP_RANKS)])
        results.check("DDP 3 ranks, uneven batches: collect (%.1f s) + triage DIR (%.2f s): %s"
                      % (collect_seconds, seconds, document["verdict"] if document else ""), problems)
        # The snapshot cores alone carry no binary of libtorch: the native stacks the diagnosis
        # read ("DDP's gradient all_reduce") travel in them, so their verdict is the same.
        snapshots_dir = os.path.join(workdir, "ddp-snapshots")
        problems, collect_seconds = collect(coreanalyze, job.pid, snapshots_dir, ["--cores", "snapshot"])
        cores = sorted(glob.glob(os.path.join(snapshots_dir, "n", "*.snapshot.core")))
        document, _, more, seconds = triage(coreanalyze, cores)
        problems += more + verdict_problems(document, wants, odd_pid, len(pids_of(out_dir)))
        results.check("DDP 3 ranks, uneven batches: triage of the snapshot cores alone: %s"
                      % (document["verdict"] if document else ""), problems)
    finally:
        job.kill()


def gunicorn_case(results, coreanalyze, workdir):
    """gunicorn --preload, 3 sync workers, an app that used torch's OpenMP pool in the arbiter:
    the two workers given a request hang in the pool they lost at fork; the third is idle."""
    if not shutil.which("gunicorn"):
        results.report("SKIP", "gunicorn", ["gunicorn is not installed (scripts/install-deps)"])
        return
    line = marker_line("gunicorn_torch_app.py", "WORKER-HANGS")
    job = gunicorn_job(workdir)
    try:
        hung = hang_gunicorn_workers(job)
        out_dir = os.path.join(workdir, "gunicorn-collected")
        problems, collect_seconds = collect(coreanalyze, job.pid, out_dir)
        document, _, more, seconds = triage(coreanalyze, [out_dir])
        problems += more
        if document is not None:
            lines = document["verdict"].splitlines()
            wants = ["the odd ones out: ", "[gunicorn worker] in `app` at gunicorn_torch_app.py:%d" % line,
                     "OpenMP (libgomp) pool whose threads it lost at fork"]
            for want in wants:
                if want not in lines[0]:
                    problems.append("the first line lacks %r: %s" % (want, document["verdict"]))
            for pid in hung:
                if "PID %d" % pid not in lines[0] and len(hung) == 1:
                    problems.append("the first line does not name hung worker %d: %s" % (pid, lines[0]))
            outliers = sorted(p["pid"] for p in document["processes"]
                              if document["groups"][p["group"]]["outlier"])
            if outliers != hung:
                problems.append("outlier processes %s, not the hung workers %s" % (outliers, hung))
            idle = [text for text in lines if text.startswith("idle (waiting for work): ") and "[gunicorn worker]" in text]
            if len(idle) != 1:
                problems.append("no idle line for the free worker: %s" % document["verdict"])
        results.check("gunicorn --preload, 3 workers, 2 hung in a lost OpenMP pool: collect (%.1f s) + triage "
                      "DIR (%.2f s): %s" % (collect_seconds, seconds, document["verdict"] if document else ""), problems)
    finally:
        job.kill()


def gunicorn_job(workdir):
    """gunicorn --preload with GUNICORN_WORKERS sync workers of tests/programs/gunicorn_torch_app.py."""
    return Job(["gunicorn", "--preload", "-w", str(GUNICORN_WORKERS), "-b", "127.0.0.1:%d" % test_collect.free_port(),
                "--timeout", "600", "--chdir", PROGRAMS, "gunicorn_torch_app:app"], workdir, "gunicorn",
               ready_in_environment=True)


def hang_gunicorn_workers(job):
    """Sends GUNICORN_HUNG requests, one at a time, each once the one before hangs (so each goes to
    a worker still free); the PIDs of the workers that hang, sorted."""
    port = int(job.argv[job.argv.index("-b") + 1].rsplit(":", 1)[1])
    deadline = time.time() + START_TIMEOUT
    while time.time() < deadline and len(worker_pids(job.pid)) < GUNICORN_WORKERS:
        time.sleep(0.2)
    for number in range(1, GUNICORN_HUNG + 1):
        threading.Thread(target=request, args=("http://127.0.0.1:%d/" % port,), daemon=True).start()
        job.wait_ready(number)
    return sorted(job.ready().values())


def worker_pids(parent):
    try:
        with open("/proc/%d/task/%d/children" % (parent, parent)) as stream:
            return [int(pid) for pid in stream.read().split()]
    except OSError:
        return []


def request(url):
    try:
        urllib.request.urlopen(url, timeout=RUN_TIMEOUT).read()
    except OSError:
        pass  # the worker hangs: no answer comes


def dataloader_case(results, coreanalyze, workdir):
    line = marker_line("job_dataloader_hang.py", "WORKER-WAITS")
    job = Job([PYTHON, os.path.join(PROGRAMS, "job_dataloader_hang.py")], workdir, "dataloader")
    try:
        ready = job.wait_ready(4)  # the main process and 3 workers
        stuck = ready["worker%d" % DATALOADER_STUCK]
        out_dir = os.path.join(workdir, "dataloader-collected")
        problems, collect_seconds = collect(coreanalyze, job.pid, out_dir)
        document, _, more, seconds = triage(coreanalyze, [out_dir])
        wants = ["DataLoader worker %d (PID %d" % (DATALOADER_STUCK, stuck), "job_dataloader_hang.py:%d" % line,
                 "idle (waiting for work): "]
        problems += more + verdict_problems(document, wants, stuck, len(pids_of(out_dir)))
        if document is not None:
            roles = dict((p["pid"], p.get("role")) for p in document["processes"])
            if roles.get(stuck) != "DataLoader worker":
                problems.append("the stuck worker's role: %s" % roles.get(stuck))
            if "DataLoader worker" not in document["verdict"]:
                problems.append("the verdict does not say DataLoader worker: %s" % document["verdict"])
        results.check("DataLoader, 3 workers: collect (%.1f s) + triage DIR (%.2f s): %s"
                      % (collect_seconds, seconds, document["verdict"] if document else ""), problems)
    finally:
        job.kill()


def prefork_case(results, coreanalyze, workdir):
    line = marker_line("prefork_server.py", "WORKER-STUCK")
    job = Job([PYTHON, os.path.join(PROGRAMS, "prefork_server.py")], workdir, "prefork")
    try:
        ready = job.wait_ready(5)  # the arbiter and 4 workers
        stuck = ready["worker%d" % PREFORK_STUCK]
        out_dir = os.path.join(workdir, "prefork-collected")
        problems, collect_seconds = collect(coreanalyze, job.pid, out_dir)
        document, _, more, seconds = triage(coreanalyze, [out_dir])
        wants = ["PID %d" % stuck, "prefork_server.py:%d" % line, "idle (waiting for work): processes"]
        problems += more + verdict_problems(document, wants, stuck, len(pids_of(out_dir)))
        if document is not None and "PID %d" % job.pid in document["verdict"].splitlines()[0]:
            problems.append("the arbiter is counted among the workers: %s" % document["verdict"])
        results.check("pre-fork server, 4 workers: collect (%.1f s) + triage DIR (%.2f s): %s"
                      % (collect_seconds, seconds, document["verdict"] if document else ""), problems)
    finally:
        job.kill()


def torch_missing_reason():
    """Why Debian's python3-torch with gloo cannot run here (the import's own error), or None."""
    if not os.path.exists(PYTHON):
        return "%s not found" % PYTHON
    if shutil.which("torchrun") is None:
        return "no torchrun on the PATH"
    result = subprocess.run([PYTHON, "-c", "import torch.distributed as d; assert d.is_gloo_available(), "
                             "'torch.distributed has no gloo'"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    if result.returncode != 0:
        lines = result.stdout.decode("utf-8", "replace").strip().splitlines()
        return "%s: %s" % (PYTHON, lines[-1] if lines else "exit %d" % result.returncode)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--only", help="run only this case (torchrun, spawn, missing, pool, pipe, queue, server, ddp, "
                        "gunicorn, dataloader, prefork)")
    args = parser.parse_args()
    coreanalyze = os.path.abspath(args.coreanalyze)
    reason = torch_missing_reason()
    if reason:
        print("SKIP Debian's python3-torch with gloo is not installed (scripts/install-deps): "
              + reason)
        return SKIP
    results = Results()
    workdir = tempfile.mkdtemp(prefix="hangpy-jobs-", dir="/var/tmp")
    started = time.time()
    try:
        for name, case in (("torchrun", torchrun_case), ("spawn", spawn_case),
                           ("missing", missing_rank_case), ("pool", lost_task_case),
                           ("pipe", pipe_cycle_case), ("queue", queue_join_case),
                           ("server", server_client_case), ("ddp", ddp_case),
                           ("gunicorn", gunicorn_case), ("dataloader", dataloader_case),
                           ("prefork", prefork_case)):
            if args.only and args.only != name:
                continue
            try:
                case(results, coreanalyze, workdir)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                results.check(name, [str(error)])
    finally:
        if args.keep:
            print("kept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print("     (%.1f s in all)" % (time.time() - started))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
