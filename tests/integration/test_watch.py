#!/usr/bin/python3
"""Integration test: coreanalyze watch on real processes (tests/programs/watch_progress.py and
watch_torch_job.py), each judged by what the program itself wrote before it blocked:

- a job that moves slowly (asleep on the same line at every look, only its loop variable moving
  on) is never called stuck, and its looks say it moved;
- a pure Python loop at 100% of a CPU is busy, not stuck; with --busy-is-stuck it is caught;
- a parent whose worker processes come and go is watched through them without a capture;
- a process that hangs after a while is caught within --after + one interval (+ the looks' own
  time) of the moment it wrote that it blocks, never before it blocked; the capture holds its
  JSON, a snapshot core, the triage naming the function it blocks in, watch.txt; --exec runs;
- a 4-rank gloo job under torchrun that trains, then hangs (one rank leaves, the others block in
  all_reduce), is caught, and the verdict names the odd rank (skips without python3-torch);
- a deadlocked main thread beside a "heartbeat" thread that writes and counts is caught (the
  helper's motion is no progress), and the looks name the still thread and the moving helper;
  `--must-move heartbeat` makes the heartbeat the thread that counts, and nothing is caught;
- a regular expression backtracking in C, on one CPU shared with 8 CPU-bound processes (a small
  share of the CPU, much time in the run queue), is busy ("runnable"), never caught as a hang;
- the heartbeat and the joining parent also on pyenv's 3.8, 3.10, 3.12 and 3.13;
- with --any, a multiprocessing parent in join() over workers that step on is "waiting for
  moving children", never the trigger;
- `diff` of two looks without locals at a slow job says "no change seen in frames (locals not
  compared ...)", never "stuck"; `watch --pid` of a PID that does not exist exits at once (3);
- a kill window: the same job whose process group times out 20 s into the hang, after which the
  failed ranks exit and torchrun's agent kills the odd one: `watch --interval 1 --after 5`
  captures every rank (JSON and snapshot core) before the kill, and the capture's time is shown;
- two looks at a torchrun job whose odd rank goes on working alone: `diff` of the two collect
  directories and of their snapshot cores alone, and `triage --again-after` on the live ranks, call
  the odd rank slow (it moved) and the others stuck.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import Results, SKIP  # noqa: E402
import interpreters  # noqa: E402
import test_collect  # noqa: E402  (torchrun's options, the torch jobs' environment)

PROGRAMS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "programs")
PYTHON = "/usr/bin/python3"
HANG_CAUGHT = 20
# A look costs time of its own (a child collect and a child analysis per process, on a loaded
# 2-core machine): how much later than --after + --interval a capture may come.
LOOK_SLACK = 4.0


class Program(object):
    """A test program in a session of its own, with its READY_DIR."""

    def __init__(self, argv, workdir, name, environment=None):
        self.ready_dir = os.path.join(workdir, name + "-ready")
        os.makedirs(self.ready_dir)
        self.log = open(os.path.join(workdir, name + ".log"), "wb")
        self.process = subprocess.Popen(argv + [self.ready_dir], start_new_session=True,
                                        stdout=self.log, stderr=subprocess.STDOUT, env=environment)
        self.pid = self.process.pid

    def wait_for(self, pattern, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = glob.glob(os.path.join(self.ready_dir, pattern))
            if found:
                return found
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        self.log.flush()
        raise RuntimeError("%s never appeared (exit %s): %s" % (pattern, self.process.poll(),
                                                               test_collect.output_tail(self.log.name)))

    def kill(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()
        self.log.close()


def watch(coreanalyze, pid, out_dir, *options, timeout=300):
    """Runs coreanalyze watch; (exit code, stdout, stderr, the time it ended)."""
    argv = [coreanalyze, "watch", "--pid", str(pid), "--output", out_dir] + list(options)
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, timeout=timeout)
    return (result.returncode, result.stdout.decode("utf-8", "replace"),
            result.stderr.decode("utf-8", "replace"), time.time())


def looks(out_dir):
    with open(os.path.join(out_dir, "looks.jsonl")) as lines:
        return [json.loads(line) for line in lines]


def motions(out_dir):
    """Every (motion, why) of every process in every look after the first."""
    return [(process["motion"], process["why"]) for look in looks(out_dir)[1:]
            for process in look["processes"]]


def tail(text, lines=12):
    return "\n".join(text.strip().splitlines()[-lines:])


def slow_case(results, coreanalyze, workdir):
    program = Program([PYTHON, os.path.join(PROGRAMS, "watch_progress.py"), "slow"], workdir, "slow")
    try:
        program.wait_for("started")
        out_dir = os.path.join(workdir, "slow-watch")
        code, _, errors, _ = watch(coreanalyze, program.pid, out_dir, "--interval", "0.5",
                                   "--after", "2", "--for", "7")
        problems = []
        if code != 0:
            problems.append("exit %d, not 0 (a slow job called stuck?): %s" % (code, tail(errors)))
        seen = motions(out_dir)
        if not any(motion == "moved" and "`step`" in why for motion, why in seen):
            problems.append("no look says the loop's `step` moved on: %s" % seen)
        if os.path.exists(os.path.join(out_dir, "triage.txt")):
            problems.append("a capture was made")
        results.check("a slow job (asleep on one line, `step` moving on) is never called stuck", problems)
    finally:
        program.kill()


def spin_case(results, coreanalyze, workdir):
    program = Program([PYTHON, os.path.join(PROGRAMS, "watch_progress.py"), "spin"], workdir, "spin")
    try:
        program.wait_for("started")
        out_dir = os.path.join(workdir, "spin-watch")
        code, _, errors, _ = watch(coreanalyze, program.pid, out_dir, "--interval", "0.5",
                                   "--after", "2", "--for", "6")
        problems = []
        if code != 0:
            problems.append("exit %d, not 0: %s" % (code, tail(errors)))
        seen = motions(out_dir)
        busy = [why for motion, why in seen if motion == "busy"]
        if not seen:
            # --for 6 at --interval 0.5: a dozen looks; none after the first proves nothing.
            problems.append("no look after the first (%d looks in looks.jsonl)" % len(looks(out_dir)))
        elif len(busy) < len(seen) / 2:
            problems.append("fewer than half the looks say busy: %s" % seen)
        if busy and "% of a CPU" not in busy[0]:
            problems.append("busy without its CPU share: %s" % busy[0])
        results.check("a pure Python loop at 100%% CPU is busy, not stuck (%d of %d looks busy)"
                      % (len(busy), len(seen)), problems)
        out_dir = os.path.join(workdir, "spin-watch-busy")
        code, _, errors, _ = watch(coreanalyze, program.pid, out_dir, "--interval", "0.5",
                                   "--after", "2", "--for", "20", "--busy-is-stuck", "--cores", "none")
        problems = [] if code == HANG_CAUGHT else ["exit %d, not %d: %s" % (code, HANG_CAUGHT, tail(errors))]
        if "spinning in `spin` at watch_progress.py" not in errors or "busy on every look" not in errors:
            problems.append("the capture does not say it spins: %s" % tail(errors, 4))
        results.check("--busy-is-stuck catches the same loop, spinning on every look", problems)
    finally:
        program.kill()


def heartbeat_case(results, coreanalyze, workdir, python=PYTHON, label="debian-3.11"):
    program = Program([python, os.path.join(PROGRAMS, "watch_progress.py"), "heartbeat"], workdir, "heartbeat-" + label)
    try:
        hung = program.wait_for("hung")[0]
        with open(hung) as stream:
            hung_at = float(stream.readline())
        out_dir = os.path.join(workdir, "heartbeat-watch-" + label)
        code, _, errors, ended = watch(coreanalyze, program.pid, out_dir, "--interval", "0.5",
                                       "--after", "3", "--for", "30", "--cores", "none")
        problems = []
        if code != HANG_CAUGHT:
            problems.append("exit %d, not %d (the heartbeat hid the hang?): %s" % (code, HANG_CAUGHT, tail(errors)))
        elif ended - hung_at > 3 + 0.5 + LOOK_SLACK + 2:
            problems.append("caught %.1f s after the hang" % (ended - hung_at))
        whys = [why for motion, why in motions(out_dir)]
        if not any("MainThread still" in why and "heartbeat moving" in why for why in whys):
            problems.append("no look names the still main thread and the moving heartbeat: %s" % whys[-3:])
        if "heartbeat moving" not in errors:
            problems.append("no look line says so: %s" % tail(errors, 4))
        results.check("%s: a deadlocked main thread beside a ticking heartbeat thread is caught" % label, problems)
        if python != PYTHON:
            return
        out_dir = os.path.join(workdir, "heartbeat-must-move")
        code, _, errors, _ = watch(coreanalyze, program.pid, out_dir, "--interval", "0.5", "--after", "2",
                                   "--for", "5", "--cores", "none", "--must-move", "heartbeat")
        results.check("--must-move heartbeat: the heartbeat is the progress, nothing caught",
                      [] if code == 0 else ["exit %d, not 0: %s" % (code, tail(errors))])
    finally:
        program.kill()


def crowded_case(results, coreanalyze, workdir):
    taskset = shutil.which("taskset")
    if taskset is None:
        results.report("SKIP", "a regex spinning on a crowded CPU", ["no taskset (util-linux)"])
        return
    hogs = [subprocess.Popen([taskset, "-c", "0", PYTHON, "-c", "while True: pass"], start_new_session=True)
            for _ in range(8)]
    program = Program([taskset, "-c", "0", PYTHON, os.path.join(PROGRAMS, "watch_progress.py"), "regex"],
                      workdir, "regex")
    try:
        program.wait_for("started")
        out_dir = os.path.join(workdir, "regex-watch")
        code, _, errors, _ = watch(coreanalyze, program.pid, out_dir, "--interval", "1", "--after", "4",
                                   "--for", "9", "--cores", "none")
        problems = [] if code == 0 else ["exit %d, not 0 (a spinning regex called a hang?): %s" % (code, tail(errors))]
        seen = motions(out_dir)
        runnable = [why for motion, why in seen if motion == "busy" and "runnable" in why]
        if not runnable:
            problems.append("no look says busy, runnable: %s" % seen)
        results.check("a regex spinning on a CPU shared with 8 others is busy, runnable (%d of %d looks)"
                      % (len(runnable), len(seen)), problems)
    finally:
        program.kill()
        for hog in hogs:
            hog.kill()
            hog.wait()


def join_case(results, coreanalyze, workdir, python=PYTHON, label="debian-3.11"):
    program = Program([python, os.path.join(PROGRAMS, "watch_progress.py"), "join"], workdir, "join-" + label)
    try:
        program.wait_for("started")
        time.sleep(0.5)
        out_dir = os.path.join(workdir, "join-watch-" + label)
        code, _, errors, _ = watch(coreanalyze, program.pid, out_dir, "--interval", "0.5", "--after", "2",
                                   "--for", "6", "--any", "--cores", "none")
        problems = [] if code == 0 else ["exit %d, not 0 (the joining parent was the trigger?): %s" % (code, tail(errors))]
        parent = [why for look in looks(out_dir)[1:] for process in look["processes"]
                  if process["pid"] == program.pid for why in [process["why"]]]
        if not parent or not all(why.startswith("waiting for moving children") for why in parent[1:]):
            problems.append("the parent's looks: %s" % parent)
        if "waiting for moving children" not in errors:
            problems.append("no look line counts it: %s" % tail(errors, 3))
        results.check("%s: --any: a parent in join() over moving workers is waiting for moving children" % label, problems)
    finally:
        program.kill()


def other_interpreters_case(results, coreanalyze, workdir):
    """The role rules on pyenv's 3.8-3.13: the heartbeat and the joining parent."""
    for label, interpreter in interpreters.each_installed(("pyenv-3.8", "pyenv-3.10", "pyenv-3.12", "pyenv-3.13"), results):
        heartbeat_case(results, coreanalyze, workdir, interpreter.executable, label)
        join_case(results, coreanalyze, workdir, interpreter.executable, label)


def no_locals_case(results, coreanalyze, workdir):
    program = Program([PYTHON, os.path.join(PROGRAMS, "watch_progress.py"), "slow"], workdir, "slow-diff")
    try:
        program.wait_for("started")
        first, second = os.path.join(workdir, "nolocals-1"), os.path.join(workdir, "nolocals-2")
        for where in (first, second):
            subprocess.run([coreanalyze, "collect", "--pid", str(program.pid), "--no-locals", "--no-triage",
                            "-o", where, "--node-name", "n"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=120)
            time.sleep(2)
        result = subprocess.run([coreanalyze, "diff", first, second], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                timeout=120)
        text = result.stdout.decode("utf-8", "replace")
        problems = []
        if "no change seen in frames" not in text or "locals not compared: give --locals" not in text:
            problems.append("diff says: %s" % tail(text, 4))
        if "stuck" in text:
            problems.append("a slow job whose locals were not compared is called stuck: %s" % tail(text, 4))
        results.check("diff of two looks without locals: no change seen in frames, locals not compared", problems)
    finally:
        program.kill()
    started = time.time()
    code, _, errors, _ = watch(coreanalyze, 4194303, os.path.join(workdir, "nobody-watch"), "--interval", "1",
                               timeout=30)
    problems = [] if code == 3 and time.time() - started < 5 else \
        ["exit %d after %.1f s: %s" % (code, time.time() - started, tail(errors))]
    if "nothing to watch" not in errors:
        problems.append("no line says so: %s" % tail(errors))
    results.check("watch --pid of a PID that does not exist: exit 3 at once", problems)


def workers_case(results, coreanalyze, workdir):
    program = Program([PYTHON, os.path.join(PROGRAMS, "watch_progress.py"), "workers"], workdir, "workers")
    try:
        program.wait_for("started")
        out_dir = os.path.join(workdir, "workers-watch")
        code, _, errors, _ = watch(coreanalyze, program.pid, out_dir, "--interval", "0.5",
                                   "--after", "2", "--for", "7")
        problems = []
        if code != 0:
            problems.append("exit %d, not 0: %s" % (code, tail(errors)))
        started = {int(os.path.basename(path).split("-")[1]) for path in
                   glob.glob(os.path.join(program.ready_dir, "worker-*"))}
        watched = {process["pid"] for look in looks(out_dir) for process in look["processes"]}
        seen_workers = watched & started
        if len(seen_workers) < 2:
            problems.append("the looks saw %d of the %d workers that came and went"
                            % (len(seen_workers), len(started)))
        if program.pid not in watched:
            problems.append("the parent %d is in no look" % program.pid)
        results.check("workers that come and go (%d seen of %d started): no capture, no error"
                      % (len(seen_workers), len(started)), problems)
    finally:
        program.kill()


def hangs_later_case(results, coreanalyze, workdir):
    program = Program([PYTHON, os.path.join(PROGRAMS, "watch_progress.py"), "hangs-later"],
                      workdir, "hangs-later")
    try:
        program.wait_for("started")
        out_dir = os.path.join(workdir, "hangs-later-watch")
        interval, after = 0.5, 3.0
        marker = os.path.join(workdir, "exec-ran")
        code, output, errors, ended = watch(coreanalyze, program.pid, out_dir, "--interval", str(interval),
                                            "--after", str(after), "--for", "60",
                                            "--exec", "echo $HANGPY_STUCK_PIDS > %s" % marker)
        problems = []
        if code != HANG_CAUGHT:
            problems.append("exit %d, not %d: %s" % (code, HANG_CAUGHT, tail(errors)))
        hung = os.path.join(program.ready_dir, "hung")
        if not os.path.exists(hung):
            problems.append("the program never blocked, yet: %s" % tail(errors))
        else:
            with open(hung) as truth:
                blocked_at, function = truth.read().split("\n")[:2]
            late = ended - float(blocked_at)
            if late < after - interval:
                problems.append("caught %.1f s after it blocked: before --after (%.1f s)" % (late, after))
            if late > after + interval + LOOK_SLACK:
                problems.append("caught %.1f s after it blocked, later than --after + --interval + "
                                "%.0f s" % (late, LOOK_SLACK))
            verdict = open(os.path.join(out_dir, "triage.txt")).read() \
                if os.path.exists(os.path.join(out_dir, "triage.txt")) else ""
            if function not in verdict:
                problems.append("triage.txt does not name %s: %s" % (function, tail(verdict)))
            if function not in output:
                problems.append("the printed verdict does not name %s" % function)
            node_files = glob.glob(os.path.join(out_dir, "*", "%d.*" % program.pid))
            for suffix in (".json", ".snapshot.core"):
                if not any(path.endswith(suffix) for path in node_files):
                    problems.append("no %s of the process in the capture: %s" % (suffix, node_files))
            if not os.path.exists(os.path.join(out_dir, "watch.txt")):
                problems.append("no watch.txt")
            ran = open(marker).read().split() if os.path.exists(marker) else []
            if ran != [str(program.pid)]:
                problems.append("--exec saw HANGPY_STUCK_PIDS %s, not [%d]" % (ran, program.pid))
            label = "a process that hangs after %.0f s is caught %.1f s after it blocked (--after %.0f, " \
                    "--interval %.1f)" % (3.0, late, after, interval)
        results.check(label if not problems or os.path.exists(hung) else "a process that hangs later", problems)
    finally:
        program.kill()


def torch_job(results, workdir, name, ranks, odd, timeout=None):
    """watch_torch_job.py under torchrun, its odd rank hanging (with a process-group timeout, when
    given); None, reported as skipped, without python3-torch."""
    reason = torch_missing_reason()
    if reason:
        results.report("SKIP", "%s: %s" % (name, reason))
        return None
    argv = test_collect.torchrun_argv(shutil.which("torchrun"), ranks, os.path.join(workdir, name + "-logs")) + [
        os.path.join(PROGRAMS, "watch_torch_job.py"), str(odd), "hang"]
    environment = test_collect.torch_environment()
    if timeout is not None:
        environment = dict(environment, HANG_TIMEOUT_SECONDS=str(timeout))
    return Program(argv, workdir, name, environment)


def torchrun_case(results, coreanalyze, workdir):
    ranks, odd = 4, 3
    program = torch_job(results, workdir, "torchrun", ranks, odd)
    if program is None:
        return
    try:
        program.wait_for("rank*.started", timeout=240)
        out_dir = os.path.join(workdir, "torchrun-watch")
        interval, after = 1.0, 5.0
        code, output, errors, ended = watch(coreanalyze, program.pid, out_dir, "--interval", str(interval),
                                            "--after", str(after), "--for", "180")
        problems = []
        if code != HANG_CAUGHT:
            problems.append("exit %d, not %d: %s" % (code, HANG_CAUGHT, tail(errors)))
        hung = os.path.join(program.ready_dir, "hung")
        late = None
        if not os.path.exists(hung):
            problems.append("the odd rank never blocked")
        else:
            late = ended - float(open(hung).read())
            if late < after - interval:
                problems.append("caught %.1f s after the hang began: before --after" % late)
            if late > after + interval + 2 * LOOK_SLACK:
                problems.append("caught %.1f s after the hang began: too late" % late)
        verdict = open(os.path.join(out_dir, "triage.txt")).read() \
            if os.path.exists(os.path.join(out_dir, "triage.txt")) else ""
        for wanted in ("rank %d" % odd, "all_reduce", "wait_for_nothing"):
            if wanted not in verdict:
                problems.append("the verdict does not say %r: %s" % (wanted, tail(verdict, 20)))
        moved = [why for motion, why in motions(out_dir) if motion == "moved"]
        if not moved:
            problems.append("no look saw the ranks train before the hang")
        results.check("torchrun 4 gloo ranks train, then hang: caught %s after the hang, verdict "
                      "names rank %d" % ("%.1f s" % late if late is not None else "?", odd), problems)
    finally:
        program.kill()


def kill_window_case(results, coreanalyze, workdir):
    ranks, odd, timeout = 4, 3, 20.0
    program = torch_job(results, workdir, "kill-window", ranks, odd, timeout)
    if program is None:
        return
    try:
        program.wait_for("rank*.started", timeout=240)
        out_dir = os.path.join(workdir, "kill-watch")
        code, _, errors, ended = watch(coreanalyze, program.pid, out_dir, "--interval", "1", "--after", "5",
                                       "--for", "120")
        problems = [] if code == HANG_CAUGHT else ["exit %d, not %d: %s" % (code, HANG_CAUGHT, tail(errors))]
        hung = os.path.join(program.ready_dir, "hung")
        hung_at = float(open(hung).read()) if os.path.exists(hung) else None
        manifest_path = os.path.join(out_dir, "manifest.json")
        manifest = json.load(open(manifest_path)) if os.path.exists(manifest_path) else {}
        node = next(iter(manifest.get("nodes", {}).values()), {})
        snapshots = glob.glob(os.path.join(out_dir, "*", "*.snapshot.core"))
        rank_documents = [p for p in glob.glob(os.path.join(out_dir, "*", "*.json"))
                          if os.path.basename(p)[0].isdigit()]
        if manifest.get("failed") or len(snapshots) < ranks or len(rank_documents) < ranks:
            problems.append("the capture lacks ranks: %d snapshots, %d documents, %s failed"
                            % (len(snapshots), len(rank_documents), manifest.get("failed")))
        try:
            status = program.process.wait(timeout=timeout + 60)
        except subprocess.TimeoutExpired:
            status = None
        if status is None or status == 0:
            problems.append("torchrun did not end by killing the ranks after the timeout (status %r)" % status)
        capture = node.get("seconds")
        if hung_at is not None and ended - hung_at > timeout:
            problems.append("the capture ended %.1f s after the hang: past the %.0f s kill" % (ended - hung_at, timeout))
        results.check("a kill window: every rank captured %s after the hang, before the agent's kill at %.0f s "
                      "(the capture's node took %s)" % ("%.1f s" % (ended - hung_at) if hung_at else "?", timeout,
                                                         "%.2f s" % capture if capture is not None else "?"), problems)
    finally:
        program.kill()


def collect(coreanalyze, pid, out_dir):
    result = subprocess.run([coreanalyze, "collect", "--pid", str(pid), "--cores", "snapshot",
                             "--no-triage", "--output", out_dir], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=300)
    if result.returncode != 0:
        raise RuntimeError("collect exit %d: %s" % (result.returncode, tail(result.stderr.decode())))


def only_cores(directory, into):
    """A directory of the snapshot cores alone (the diff then reads the cores, not the JSON)."""
    os.makedirs(into)
    for core in glob.glob(os.path.join(directory, "*", "*.snapshot.core")):
        shutil.copy(core, into)
    return into


def diff_json(coreanalyze, first, second):
    result = subprocess.run([coreanalyze, "diff", first, second, "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=300)
    if result.returncode != 0:
        raise RuntimeError("diff exit %d: %s" % (result.returncode, tail(result.stderr.decode())))
    return json.loads(result.stdout)


def diff_problems(document, rank_pids, odd, what):
    """The odd rank moved, the others are still; the groups say stuck and slow."""
    problems = []
    by_pid = {entry["pid"]: entry for entry in document["processes"]}
    for rank, pid in rank_pids.items():
        want = "moved" if rank == odd else "still"
        got = by_pid.get(pid, {}).get("motion")
        if got != want:
            problems.append("%s: rank %d (pid %d) is %s, not %s" % (what, rank, pid, got, want))
    groups = "\n".join(document["groups"])
    if not any(line.startswith("rank %d" % odd) and "slow, not stuck" in line for line in document["groups"]):
        problems.append("%s: no group line says rank %d is slow, not stuck: %s" % (what, odd, groups))
    if not any("ranks 0-2" in line and ": stuck" in line for line in document["groups"]):
        problems.append("%s: no group line says ranks 0-2 are stuck: %s" % (what, groups))
    return problems


def diff_case(results, coreanalyze, workdir):
    """Two looks at a job where one rank still moves: diff of the collect directories, of the
    snapshot cores alone, and triage --again-after on the live ranks."""
    torchrun = shutil.which("torchrun")
    reason = torch_missing_reason()
    if reason:
        results.report("SKIP", "diff of two looks at a torchrun job: " + reason)
        return
    ranks, odd = 4, 3
    argv = test_collect.torchrun_argv(torchrun, ranks, os.path.join(workdir, "diff-logs")) + [
        os.path.join(PROGRAMS, "watch_torch_job.py"), str(odd), "keeps-working"]
    program = Program(argv, workdir, "diff-job", test_collect.torch_environment())
    try:
        program.wait_for("hung", timeout=240)
        time.sleep(1.0)  # the others reach the all_reduce the odd rank never joins
        rank_pids = {}
        for path in glob.glob(os.path.join(program.ready_dir, "rank*.started")):
            rank, pid = os.path.basename(path)[len("rank"):-len(".started")].split("-")
            rank_pids[int(rank)] = int(pid)
        first, second = os.path.join(workdir, "look1"), os.path.join(workdir, "look2")
        collect(coreanalyze, program.pid, first)
        time.sleep(2.0)
        collect(coreanalyze, program.pid, second)
        problems = diff_problems(diff_json(coreanalyze, first, second), rank_pids, odd, "JSON looks")
        results.check("diff of two collect directories: rank %d moves on alone, ranks 0-2 stuck" % odd, problems)
        cores = diff_json(coreanalyze, only_cores(first, os.path.join(workdir, "cores1")),
                          only_cores(second, os.path.join(workdir, "cores2")))
        problems = diff_problems(cores, rank_pids, odd, "snapshot cores")
        results.check("diff of the two looks' snapshot cores alone says the same", problems)
        argv = [coreanalyze, "triage", "--again-after", "2"]
        for pid in sorted(rank_pids.values()):
            argv += ["--pid", str(pid)]
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        text = result.stdout.decode("utf-8", "replace")
        problems = [] if result.returncode == 0 else ["triage exit %d" % result.returncode]
        second_look = text[text.find("A second look"):] if "A second look" in text else ""
        if "rank %d" % odd not in second_look or "slow, not stuck" not in second_look \
                or ": stuck" not in second_look:
            problems.append("the second look does not call rank %d slow and the others stuck: %s"
                            % (odd, tail(text, 8)))
        results.check("triage --again-after 2 on the live ranks: stuck and slow groups", problems)
    finally:
        program.kill()


def torch_missing_reason():
    if shutil.which("torchrun") is None:
        return "no torchrun on the PATH (Debian's python3-torch: scripts/install-deps)"
    result = subprocess.run([PYTHON, "-c", "import torch.distributed as d; assert d.is_gloo_available()"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return None if result.returncode == 0 else "python3-torch with gloo does not import"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--only", help="slow, spin, heartbeat, crowded, join, versions, no-locals, workers, hangs-later, torchrun, kill-window or diff")
    args = parser.parse_args()
    if not os.path.exists(PYTHON):
        print("SKIP %s not found" % PYTHON)
        return SKIP
    coreanalyze = os.path.abspath(args.coreanalyze)
    results = Results()
    workdir = tempfile.mkdtemp(prefix="hangpy-watch-", dir="/var/tmp")
    started = time.time()
    try:
        for name, case in (("slow", slow_case), ("spin", spin_case), ("heartbeat", heartbeat_case),
                           ("crowded", crowded_case), ("join", join_case), ("versions", other_interpreters_case), ("no-locals", no_locals_case), ("workers", workers_case),
                           ("hangs-later", hangs_later_case), ("torchrun", torchrun_case),
                           ("kill-window", kill_window_case),
                           ("diff", diff_case)):
            if args.only and args.only != name:
                continue
            try:
                case(results, coreanalyze, workdir)
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as error:
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
