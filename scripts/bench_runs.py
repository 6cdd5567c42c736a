"""How the benchmarks time one run of a command (scripts/bench, bench_goals.py, bench_triage.py):
started as a process and reaped with wait4(2), so that its wall and CPU time are the kernel's
accounting of the tool itself. Only the standard library."""
import os
import subprocess
import tempfile
import threading
import time

TOOL_TIMEOUT = 1800


def timed_run(argv):
    """(wall s, CPU s, exit code, stdout, last stderr line) of one run; wall and CPU (user +
    system) come from wait4(2) on the tool itself, with no wrapper whose start-up would count at
    coreanalyze's few milliseconds. None when it timed out."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        timer = threading.Timer(TOOL_TIMEOUT, process.kill)
        timer.start()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        timed_out = not timer.is_alive()
        timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        if timed_out:
            return None
        out.seek(0)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace").strip().splitlines()
        return (wall, usage.ru_utime + usage.ru_stime, process.returncode,
                out.read().decode("utf-8", "replace"), stderr[-1] if stderr else "")


def peak_rss_kib(argv):
    """Peak RSS of one run, from /usr/bin/time: a child forked from this Python would start its
    peak at this process's size."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".time") as timing:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", timing.name] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=TOOL_TIMEOUT)
        return int(timing.read().split()[-1])  # time prints "Command exited..." lines first
