"""Times whole commands for the benchmarks: each run started as a process and reaped with wait4,
so that its CPU time (user + system) and peak RSS are the kernel's accounting of the command and
every process it waited for. Two commands run in turn (A B A B ...) and their ratio is taken pair
by pair, so that a drift of the machine's speed during the runs does not move it. Prints min,
median and max of each figure; quote the medians. Only the standard library: anyone can rerun it."""
import os
import statistics
import subprocess
import time


def run_once(argv):
    """(wall seconds, CPU seconds, peak RSS in MiB, exit code) of one run of argv."""
    with open(os.devnull, "wb") as null:
        started = time.monotonic()
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=null, stderr=null)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, process.returncode


def spread(values, unit, digits=3):
    return "%s %s (min %s, max %s)" % (
        ("%%.%df" % digits) % statistics.median(values), unit,
        ("%%.%df" % digits) % min(values), ("%%.%df" % digits) % max(values))


def in_turn(argv_a, argv_b=None, runs=5, warmup=1):
    """A's and B's runs taken in turn (A B A B ...), after `warmup` of each not counted:
    ([(wall, cpu, rss, exit)] of A, the same of B, [] without B)."""
    for _ in range(warmup):
        run_once(argv_a)
        if argv_b:
            run_once(argv_b)
    a_runs, b_runs = [], []
    for _ in range(runs):
        a_runs.append(run_once(argv_a))
        if argv_b:
            b_runs.append(run_once(argv_b))
    return a_runs, b_runs


def compare(label_a, argv_a, label_b=None, argv_b=None, runs=5, warmup=1):
    """Prints the figures of A (and B, and A/B pair by pair); returns A's runs as
    [(wall, cpu, rss, exit)]."""
    a_runs, b_runs = in_turn(argv_a, argv_b, runs, warmup)
    for label, measured in ((label_a, a_runs), (label_b, b_runs)):
        if not measured:
            continue
        print("- %s: wall %s, cpu %s, peak %s, exit %s" % (
            label, spread([m[0] for m in measured], "s"), spread([m[1] for m in measured], "s"),
            spread([m[2] for m in measured], "MiB", 1), sorted({m[3] for m in measured})))
    if b_runs:
        ratios = [a[1] / b[1] for a, b in zip(a_runs, b_runs) if b[1] > 0]
        if ratios:
            print("- cpu ratio %s / %s, pair by pair: %s" % (label_a, label_b, spread(ratios, "x", 2)))
    return a_runs
