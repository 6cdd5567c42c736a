"""Issue 38's table for scripts/bench: each row's figure on this machine beside its goal, beside the
figure the issue recorded when it was filed, and, with --baseline, beside another coreanalyze (a
release, or any earlier build) measured on the same cores in the same run. The default runs of the
two builds are timed in turn (new, old, new, old ...), so that the machine's drift in speed, a
third within minutes on a shared 2-core VM, moves both alike; their CPU figures are medians over
the runs, and the ratio is the median of the pairs'. Only the standard library."""
import statistics

import bench_ab

PAIRED_RUNS = 61
MIB = 1024.0 * 1024.0

# What issue 38 recorded when it was filed (held-out cores of hung jobs, 2 loaded cores, CPU
# medians of paired runs, pystack 1.7.0 and gdb 13 with python3.11-dbg): the "before" of each row.
RECORDED = {
    "native_vs_pystack": "43x median, 32x worst",
    "default_vs_pystack": "23x median, 13x worst",
    "default_vs_gdb": "383x median, 220x worst",
    "small_cores": "3.5-4.0 ms",
    "ddp_default": "10-12 ms",
    "loaded_stop": "17.9 ms median, p90 38 ms",
    "fleet_10000": "5.7 s wall loaded, 1.3 s idle, 2.3 s CPU",
    "fleet_100000": "-",
    "ci": "64.6 min",
}


def ms(seconds):
    return "-" if seconds is None else "%.2f ms" % (1000 * seconds)


def median_cpu(measurement):
    return None if measurement is None else measurement.cpu_median


class Figures(object):
    """What the bench measured, filled in as it goes."""

    def __init__(self):
        self.cores = []  # (label, program, short name, {tool: Measurement})
        self.baseline = {}  # label -> (this build's median CPU, the baseline's, median ratio) of the default run
        self.loaded_stop = {}  # "this" / "baseline" -> (median ms, p90 ms)
        self.fleet = {}  # ("this" / "baseline", size) -> (wall s, CPU s, peak RSS MiB)

    def add_core(self, label, program, kind, results):
        short = "%s %s" % ({"deadlock.py": "small", "job_ddp_uneven.py": "DDP",
                            "bench_torch_process.py": "PyTorch"}.get(program, program), kind)
        self.cores.append((label, program, short, dict(results)))


def paired_default_runs(argv_this, argv_baseline, runs=PAIRED_RUNS):
    """(this build's median CPU s, the baseline's, median of this/baseline pair by pair), from runs
    taken in turn (bench_ab.in_turn); None when a run of either fails."""
    this, baseline = bench_ab.in_turn(argv_this, argv_baseline, runs)
    if any(run[3] != 0 for run in this + baseline):
        return None
    ratios = [a[1] / b[1] for a, b in zip(this, baseline) if b[1] > 0]
    return (statistics.median(run[1] for run in this), statistics.median(run[1] for run in baseline),
            statistics.median(ratios) if ratios else None)


def ratios_of(figures, peer, ours):
    """peer CPU / our CPU on each core where both ran: [(label, ratio)]."""
    found = []
    for _, _, short, tools in figures.cores:
        peer_cpu, our_cpu = median_cpu(tools.get(peer)), median_cpu(tools.get(ours))
        if peer_cpu and our_cpu:
            found.append((short, peer_cpu / our_cpu))
    return found


def median_and_worst(found):
    """(text, (median, worst)) of [(core, ratio)]; (text, None) when there is none."""
    if not found:
        return "not measured", None
    values = [ratio for _, ratio in found]
    worst = min(found, key=lambda item: item[1])
    median = statistics.median(values)
    return "%.0fx median, %.0fx worst (%s)" % (median, worst[1], worst[0]), (median, worst[1])


def met(value, goal_holds):
    if value is None:
        return "-"
    return "yes" if goal_holds(value) else "**no**"


def goal_lines(figures, with_baseline):
    """The Markdown table: row, goal, recorded when filed, the baseline's figure, this build's, met."""
    lines = ["| row | goal | when issue 38 was filed | --baseline | this build | met |",
             "|---|---|---|---|---|---|"]

    def row(name, goal, recorded_key, baseline_text, text, verdict):
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            name, goal, RECORDED[recorded_key], baseline_text if with_baseline else "-", text, verdict))

    text, found = median_and_worst(ratios_of(figures, "pystack --native", "coreanalyze --native"))
    row("vs pystack, `--native` (`pystack core --native`)", "kept: >= 43x median, >= 32x worst",
        "native_vs_pystack", "-", text, met(found, lambda value: value[0] >= 43 and value[1] >= 32))
    text, found = median_and_worst(ratios_of(figures, "pystack", "coreanalyze"))
    row("vs pystack, default run", ">= 25x on every core", "default_vs_pystack", "-", text,
        met(found, lambda value: value[1] >= 25))
    text, found = median_and_worst(ratios_of(figures, "gdb py-bt", "coreanalyze"))
    row("vs gdb + debug info (`py-bt`), default run", ">= 500x on every core", "default_vs_gdb", "-", text,
        met(found, lambda value: value[1] >= 500))

    def default_run_row(name, goal_seconds, recorded_key, program_wanted):
        picked = [(label, short, tools) for label, program, short, tools in figures.cores
                  if program == program_wanted]
        if not picked:
            row(name, "<= %s CPU" % ms(goal_seconds), recorded_key, "-", "not measured", "-")
            return
        # The verdict takes the slower of the table's median and the paired runs' (the machine
        # drifts between them): a goal met in one sample only is not met.
        worst = 0
        parts, baseline_parts = [], []
        for label, short, tools in picked:
            cpu = median_cpu(tools.get("coreanalyze"))
            part = "%s %s" % (short, ms(cpu))
            worst = max(worst, cpu or 0)
            paired = figures.baseline.get(label)
            if paired:
                new, old, pair_ratio = paired
                part += " (%s beside the baseline, %.2fx its CPU pair by pair)" % (ms(new), pair_ratio)
                baseline_parts.append("%s %s" % (short, ms(old)))
                worst = max(worst, new)
            parts.append(part)
        row(name, "<= %s CPU" % ms(goal_seconds), recorded_key, ", ".join(baseline_parts) or "-",
            ", ".join(parts), met(worst, lambda value: value <= goal_seconds))

    default_run_row("small cores, default run", 0.003, "small_cores", "deadlock.py")
    default_run_row("DDP rank, default run", 0.006, "ddp_default", "job_ddp_uneven.py")

    def stop_text(key):
        found = figures.loaded_stop.get(key)
        return "-" if found is None else "%.2f ms median, p90 %.2f ms" % found

    this_stop = figures.loaded_stop.get("this")
    row("live stop, ~150-thread torch rank beside a CPU hog per core", "<= 2 ms median, <= 5 ms p90",
        "loaded_stop", stop_text("baseline"), stop_text("this") if this_stop else "not measured",
        met(this_stop, lambda value: value[0] <= 2 and value[1] <= 5))

    def fleet_text(key):
        found = figures.fleet.get(key)
        return "-" if found is None else "%.2f s wall, %.2f s CPU, %.0f MiB" % found

    for size, goal_seconds, recorded_key in ((10000, 1.0, "fleet_10000"), (100000, 10.0, "fleet_100000")):
        this = figures.fleet.get(("this", size))
        if this is None and size != 10000:
            continue
        row("`triage` of %d real rank results" % size, "< %g s wall, < 200 MB" % goal_seconds, recorded_key,
            fleet_text(("baseline", size)), fleet_text(("this", size)) if this else "not measured",
            met(this, lambda value: value[0] < goal_seconds and value[2] * MIB / 1e6 < 200))
    row("CI (`.ci/run`, clean clone, 2 cores)", "<= 45 min", "ci", "-",
        "not timed here: `.ci/run` prints each step's time and the total", "-")
    return lines
