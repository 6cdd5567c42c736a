#!/usr/bin/python3
"""Integration test: coreanalyze --pid on running processes (no core), against the ground truth
the programs write about themselves.

- every interpreter present: deadlock.py's stacks (--json and text) equal the ground truth, and
  its deadlock is diagnosed, with the process held stopped (the stop time is in --json) and with
  --nonblocking (never stopped); processes in the Debian chroots resolve their own files through
  /proc/PID/root, with no --sysroot;
- --native-all on deadlock.py under the interpreters test_native.py covers: the same checks of
  the merged stacks as on a core (libdwfl unwinds from the registers and memory read while the
  process is stopped);
- why_misc_waits.py: every thread is mid-syscall (futex, clock_nanosleep, recvfrom, select,
  read...): each shows its system call and what it is blocked on;
- coreanalyze run as another user without privileges: exit code 10, one line saying what to do;
- a process already traced by gdb: exit code 10, one line naming the tracer, and the process
  still traced by gdb (untouched); once gdb has detached, --pid works;
- the process is running and not stopped (/proc/PID/stat state S or R, never t or T) after
  every run: a success, an error (a wrong --python layout), SIGINT and SIGTERM sent to coreanalyze
  while the process is stopped, and --max-stop passed (exit code 11);
- several PIDs: text reports one after the other, --json an array in the order given;
- a 20-thread process, 100 Python frames deep each (deep_threads.py): the stop time, printed
  (goal < 10 ms) and checked under a bound a loaded machine still meets;
- the stop windows an outside trace (strace) of the ptrace calls shows, against live.stops_ms,
  stopped_ms (their sum) and longest_stop_ms, with 20 threads asleep and one spinning
  (stop_window.py); no file is opened while the process is held.

The hidden option --hold-stopped MS keeps the process stopped after its stacks are read, so that
a signal or --max-stop can be sent while it is.

Exit status: 0 passed, 1 failed, 77 no interpreter of the list is installed.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import cores  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
import test_diagnosis  # noqa: E402
import test_collect  # noqa: E402  (copy_for_another_user)
import test_native  # noqa: E402
from results import Results  # noqa: E402

NAMES = interpreters.names("integration")
# One per kind of build for the cases that are about stopping rather than about layouts.
STOP_CASE_NAMES = ["pyenv-3.12", "debian-3.11", "pyenv-2.7", "sid-3.15"]
EXIT_NOT_PERMITTED = 10
EXIT_STOP_TIMEOUT = 11
EXIT_WRONG_LAYOUT = 6
RUN_TIMEOUT = 60
STOP_TIME_RUNS = 7
# The goal is 10 ms for 20 threads; a machine busy with builds stretches any one run.
STOP_TIME_BOUND_MS = 100.0


def state_of(pid):
    """The state letter of /proc/PID/stat (R, S, D, t, T, Z...), None when the process is gone."""
    try:
        with open("/proc/%d/stat" % pid) as stat:
            text = stat.read()
    except (IOError, OSError):
        return None
    return text[text.rindex(")") + 2]


def tracer_of(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    return 0


def running_problems(pid, when):
    """The process must be alive and not stopped (a thread of it either)."""
    problems = []
    for task in sorted(os.listdir("/proc/%d/task" % pid)) if state_of(pid) else []:
        state = state_of_task(pid, int(task))
        if state not in ("S", "R", "D"):
            problems.append("%s: thread %s of process %d is in state %r" % (when, task, pid, state))
    if state_of(pid) is None:
        problems.append("%s: process %d is gone" % (when, pid))
    elif tracer_of(pid) != 0:
        problems.append("%s: process %d is still traced by %d" % (when, pid, tracer_of(pid)))
    return problems


def state_of_task(pid, tid):
    try:
        with open("/proc/%d/task/%d/stat" % (pid, tid)) as stat:
            text = stat.read()
    except (IOError, OSError):
        return None
    return text[text.rindex(")") + 2]


def run(coreanalyze, pids, args=()):
    argv = [coreanalyze, "--no-color"] + ["--pid=%d" % pid for pid in pids] + list(args)
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=RUN_TIMEOUT)
    return (result.returncode, result.stdout.decode("utf-8", "replace"),
            result.stderr.decode("utf-8", "replace"))


def version_of(truth):
    return tuple(int(part) for part in truth["version"].split(".")[:2])


def check_live_facts(document, nonblocking, thread_count):
    live = document.get("live") or {}
    problems = []
    if live.get("nonblocking") is not nonblocking:
        problems.append("live.nonblocking %r, want %r" % (live.get("nonblocking"), nonblocking))
    stopped = live.get("stopped_ms")
    if nonblocking and stopped is not None:
        problems.append("--nonblocking, yet live.stopped_ms is %r" % stopped)
    if not nonblocking:
        # Threads asleep in a system call are read without stopping them; the others are stopped.
        stopped_threads = live.get("stopped_threads", 0)
        in_syscall = live.get("threads_in_syscall", 0)
        if not isinstance(stopped, (int, float)) or stopped < 0 or (stopped_threads and stopped <= 0):
            problems.append("live.stopped_ms %r for %r stopped threads" % (stopped, stopped_threads))
        if stopped_threads + in_syscall != thread_count:
            problems.append("live.stopped_threads %r + threads_in_syscall %r, the process has %d"
                            % (stopped_threads, in_syscall, thread_count))
        if live.get("moved_threads"):
            problems.append("threads ran while read every time: %r" % live.get("moved_threads"))
    return problems


def stacks_case(coreanalyze, interpreter, workdir):
    """(label, problems) for deadlock.py read live, stopped and not."""
    with cores.ScenarioProcess(interpreter, "deadlock.py", workdir) as process:
        truth = process.wait_for_ground_truth()
        thread_count = len(os.listdir("/proc/%d/task" % process.pid))
        code, out, err = run(coreanalyze, [process.pid], ["--json"])
        problems = running_problems(process.pid, "after --pid --json")
        if code != 0:
            yield "stopped", problems + ["--json exited %d: %s" % (code, err.strip())]
        else:
            document = json.loads(out)
            problems += compare.compare_json(truth, document)
            problems += check_live_facts(document, False, thread_count)
            code, text, err = run(coreanalyze, [process.pid])
            problems += running_problems(process.pid, "after --pid")
            problems += compare.compare_text(truth, text)
            if "was stopped for" not in err and "without stopping" not in err:
                problems.append("text: no stop time on stderr: %r" % err)
            report = test_diagnosis.Report(document, truth)
            problems += test_diagnosis.check_deadlock(report, text, version_of(truth))
            yield "stopped", problems

        # --snapshot with --pid: a small core of what was read while the process was stopped,
        # which reads back (no binaries needed) as the same stacks and the same deadlock.
        pattern = os.path.join(workdir, "live.%p.core")
        snapshot = pattern.replace("%p", str(process.pid))
        code, out, err = run(coreanalyze, [process.pid], ["--json", "--snapshot", pattern])
        problems = running_problems(process.pid, "after --pid --snapshot")
        if code != 0 or not os.path.exists(snapshot):
            problems.append("--snapshot %s exited %d, wrote %s: %s"
                            % (pattern, code, os.path.exists(snapshot), err.strip()))
        else:
            size = os.path.getsize(snapshot)
            result = subprocess.run([coreanalyze, "--no-color", "--json", snapshot],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
            if result.returncode != 0:
                problems.append("the snapshot reads with exit %d: %s"
                                % (result.returncode, result.stderr.decode("utf-8", "replace").strip()))
            else:
                document = json.loads(result.stdout)
                problems += compare.compare_json(truth, document)
                result = subprocess.run([coreanalyze, "--no-color", snapshot], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
                if result.returncode != 0:
                    problems.append("the snapshot reads as text with exit %d: %s"
                                    % (result.returncode, result.stderr.decode("utf-8", "replace").strip()))
                problems += test_diagnosis.check_deadlock(test_diagnosis.Report(document, truth),
                                                          result.stdout.decode(), version_of(truth))
            os.unlink(snapshot)
            yield "snapshot (%d KB)" % (size // 1024), problems

        code, out, err = run(coreanalyze, [process.pid], ["--json", "--nonblocking"])
        problems = running_problems(process.pid, "after --nonblocking")
        if code != 0:
            yield "nonblocking", problems + ["exited %d: %s" % (code, err.strip())]
            return
        document = json.loads(out)
        problems += check_live_facts(document, True, thread_count)
        # Without stopping there are no thread pointers (fs_base): before 3.11 the Python threads
        # are not matched to their LWPs, so only the stacks are compared here.
        threads = dict((str(t.get("thread_id")), t) for t in document.get("threads") or [])
        if sorted(threads) != sorted(truth["threads"]):
            problems.append("threads %s, ground truth %s" % (sorted(threads), sorted(truth["threads"])))
        for ident in sorted(set(threads) & set(truth["threads"])):
            found = [[f.get("file"), f.get("line"), f.get("function")]
                     for f in compare.unfold_frames(threads[ident]["frames"])]
            if found != truth["threads"][ident]["frames"]:
                problems.append("thread %s: frames %r, ground truth %r"
                                % (ident, found, truth["threads"][ident]["frames"]))
        yield "nonblocking", problems


def native_case(coreanalyze, interpreter, workdir):
    """--native-all on deadlock.py, live: test_native's checks of every merged stack (the Python
    frames are the ground truth's, none of the eval loop left native, the lock waits in order)
    and of the text, given --pid=PID where they pass a core."""
    with cores.ScenarioProcess(interpreter, "deadlock.py", workdir) as process:
        truth = process.wait_for_ground_truth()
        problems = test_native.check_core(coreanalyze, "--pid=%d" % process.pid, truth)
        return problems + running_problems(process.pid, "after --native-all")


def syscall_case(coreanalyze, interpreter, workdir):
    with cores.ScenarioProcess(interpreter, "why_misc_waits.py", workdir) as process:
        truth = process.wait_for_ground_truth()
        code, out, err = run(coreanalyze, [process.pid], ["--json"])
        problems = running_problems(process.pid, "after --pid")
        if code != 0:
            return problems + ["exited %d: %s" % (code, err.strip())]
        code, text, _ = run(coreanalyze, [process.pid])
    document = json.loads(out)
    report = test_diagnosis.Report(document, truth)
    problems += test_diagnosis.check_misc_waits(report, text, version_of(truth))
    for thread in document["threads"]:
        syscall = (thread.get("state") or {}).get("syscall")
        if not syscall or not syscall.get("name"):
            problems.append("thread %s: no system call in its state %r" % (thread["name"], thread.get("state")))
    return problems


def gdb_case(coreanalyze, interpreter, workdir):
    gdb = shutil.which("gdb")
    if gdb is None:
        return None
    with cores.ScenarioProcess(interpreter, "deadlock.py", workdir) as process:
        process.wait_for_ground_truth()
        gdb_output = os.path.join(workdir, "gdb.out")  # its reason when it cannot attach
        with open(gdb_output, "wb") as log:
            debugger = subprocess.Popen([gdb, "-q", "-nx", "-p", str(process.pid)],
                                        stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT)
        problems = []
        try:
            deadline = time.time() + 30
            while tracer_of(process.pid) != debugger.pid and time.time() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)  # gdb stops every thread once attached
            before = [state_of_task(process.pid, int(t)) for t in os.listdir("/proc/%d/task" % process.pid)]
            code, out, err = run(coreanalyze, [process.pid])
            if code != EXIT_NOT_PERMITTED:
                problems.append("exit code %d, want %d" % (code, EXIT_NOT_PERMITTED))
            lines = err.strip().splitlines()
            if len(lines) != 1 or "already traced by process %d" % debugger.pid not in lines[0]:
                problems.append("stderr %r: want one line naming gdb's PID %d" % (err, debugger.pid))
            if out:
                problems.append("stdout not empty: %r" % out[:200])
            if tracer_of(process.pid) != debugger.pid:
                problems.append("gdb no longer traces the process (TracerPid %d)" % tracer_of(process.pid))
            after = [state_of_task(process.pid, int(t)) for t in os.listdir("/proc/%d/task" % process.pid)]
            if after != before:
                problems.append("thread states %r before, %r after" % (before, after))
        finally:
            debugger.communicate(b"detach\nquit\n", timeout=30)
        if problems:
            with open(gdb_output, "rb") as log:
                problems.append("gdb's output: %s" % log.read().decode("utf-8", "replace")[-2000:])
        problems += running_problems(process.pid, "after gdb detached")
        code, _, err = run(coreanalyze, [process.pid])
        if code != 0:
            problems.append("after gdb detached: exit code %d: %s" % (code, err.strip()))
        return problems


def permission_case(coreanalyze, interpreter, workdir):
    """coreanalyze as another, unprivileged user on our process: exit code 10, one line saying
    what to do, the process untouched. The other user runs a copy of coreanalyze that every user
    may reach (the clone may be closed to others: test_collect.copy_for_another_user). Why not (a
    string) when this cannot be arranged (not root, no setpriv, no directory open to others)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0:
        return "needs root (to run coreanalyze as another user)"
    if setpriv is None:
        return "needs setpriv (util-linux)"
    copy, bin_dir, why_not = test_collect.copy_for_another_user(coreanalyze)
    if why_not:
        return why_not
    try:
        with cores.ScenarioProcess(interpreter, "deadlock.py", workdir) as process:
            process.wait_for_ground_truth()
            argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", copy,
                    "--pid", str(process.pid)]
            result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    timeout=RUN_TIMEOUT, cwd=bin_dir)
            err = result.stderr.decode("utf-8", "replace")
            problems = []
            if result.returncode != EXIT_NOT_PERMITTED:
                problems.append("exit code %d, want %d: %s" % (result.returncode, EXIT_NOT_PERMITTED, err))
            if len(err.strip().splitlines()) != 1 or "CAP_SYS_PTRACE" not in err:
                problems.append("stderr %r: want one line that says what to do" % err)
            return problems + running_problems(process.pid, "after a refusal")
    finally:
        shutil.rmtree(bin_dir, ignore_errors=True)


def untraceable_leak_check_off():
    """The environment for a coreanalyze run under strace: LeakSanitizer cannot run under ptrace
    (a --sanitize build would fail on its exit), so its leak check is off there; no other build
    reads ASAN_OPTIONS."""
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), "detect_leaks=0"]))
    return env


def wait_until_stopped(pid, coreanalyze_process, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline and coreanalyze_process.poll() is None:
        # Only threads that run are stopped (those asleep in system calls are read as they are).
        tasks = os.listdir("/proc/%d/task" % pid) if state_of(pid) else []
        if any(state_of_task(pid, int(task)) == "t" for task in tasks):
            return True
        time.sleep(0.005)
    return False


def release_cases(coreanalyze, interpreter, workdir):
    """(label, problems): the process runs on after a signal to coreanalyze, a --max-stop and an
    error. A thread of why_gil_holder.py runs C (a regex) all the time: a read must stop it."""
    with cores.ScenarioProcess(interpreter, "why_gil_holder.py", workdir) as process:
        process.wait_for_ground_truth()
        for name, number in (("SIGINT", signal.SIGINT), ("SIGTERM", signal.SIGTERM)):
            analyser = subprocess.Popen([coreanalyze, "--pid", str(process.pid), "--hold-stopped",
                                         "20000"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            problems = []
            if not wait_until_stopped(process.pid, analyser):
                problems.append("the process was never seen stopped (state %r)" % state_of(process.pid))
            analyser.send_signal(number)
            analyser.communicate(timeout=RUN_TIMEOUT)
            if analyser.returncode != -number:
                problems.append("coreanalyze ended with %d, want -%d (%s)"
                                % (analyser.returncode, number, name))
            yield "released on " + name, problems + running_problems(process.pid, "after " + name)

        started = time.time()
        code, out, err = run(coreanalyze, [process.pid], ["--max-stop", "300", "--hold-stopped", "20000"])
        problems = running_problems(process.pid, "after --max-stop")
        if code != EXIT_STOP_TIMEOUT or "--max-stop" not in err or len(err.strip().splitlines()) != 1:
            problems.append("exit code %d, stderr %r: want %d and a line naming --max-stop"
                            % (code, err, EXIT_STOP_TIMEOUT))
        if time.time() - started > 10:
            problems.append("--max-stop 300 took %.1f s" % (time.time() - started))
        yield "released on --max-stop", problems

        wrong = "2.7" if not interpreter_version(process).startswith("2.") else "3.12"
        code, out, err = run(coreanalyze, [process.pid], ["--python", wrong])
        problems = running_problems(process.pid, "after an error")
        if code not in (EXIT_WRONG_LAYOUT, 4, 5) or code == 0:
            problems.append("--python %s: exit code %d (%s)" % (wrong, code, err.strip()))
        yield "released after an error (--python %s: exit %d)" % (wrong, code), problems


def interpreter_version(process):
    return process.truth["version"]


def several_pids_case(coreanalyze, interpreters_found, workdirs):
    processes = []
    try:
        for interpreter, workdir in zip(interpreters_found, workdirs):
            processes.append(cores.ScenarioProcess(interpreter, "deadlock.py", workdir))
        truths = [process.wait_for_ground_truth() for process in processes]
        pids = [process.pid for process in processes]
        code, out, err = run(coreanalyze, pids, ["--json"])
        problems = []
        if code != 0:
            return ["exit code %d: %s" % (code, err.strip())]
        documents = json.loads(out)
        if not isinstance(documents, list) or len(documents) != len(pids):
            return ["--json with %d PIDs: not an array of %d documents" % (len(pids), len(pids))]
        for truth, document in zip(truths, documents):
            problems += compare.compare_json(truth, document)
        code, text, err = run(coreanalyze, pids)
        headers = [line.split()[1] for line in text.splitlines() if line.startswith("Process ")]
        if headers != [str(pid) for pid in pids]:
            problems.append("text reports for processes %r, want %r" % (headers, pids))
        for pid in pids:
            problems += running_problems(pid, "after several PIDs")
        return problems
    finally:
        for process in processes:
            process.kill()


def stop_time_case(coreanalyze, interpreter, workdir):
    """(label, problems): the median stop time of a 20-thread process."""
    with cores.ScenarioProcess(interpreter, "deep_threads.py", workdir) as process:
        process.wait_for_ground_truth()
        times, walls, threads = [], [], None
        for _ in range(STOP_TIME_RUNS):
            started = time.time()
            code, out, err = run(coreanalyze, [process.pid], ["--json"])
            walls.append((time.time() - started) * 1000.0)
            if code != 0:
                return "stop time", ["exit code %d: %s" % (code, err.strip())]
            live = json.loads(out)["live"]
            times.append(live["stopped_ms"])
            threads = live["stopped_threads"]
        problems = running_problems(process.pid, "after the stop-time runs")
    median = statistics.median(times)
    label = ("stop time of %d threads x 100 frames: median %.2f ms (min %.2f, max %.2f; goal < 10), "
             "--pid run %.0f ms" % (threads, median, min(times), max(times), statistics.median(walls)))
    if median > STOP_TIME_BOUND_MS:
        problems.append("median stop time %.2f ms is over %.0f ms" % (median, STOP_TIME_BOUND_MS))
    return label, problems


TRACED_STOP_RUNS = 5
# Memory reads in one stop window: the warm pass's pages in one batch (IOV_MAX pages a call), and
# a page or two the held pass finds new (the spinning thread's frames moved on).
MAX_WINDOW_READS = 4


# strace's times, as coreanalyze's stop is timed: the monotonic clock (-r: the time since the line
# before, to the nanosecond, summed by ptrace_windows). -ttt's wall clock once put a window's first
# interrupt 0.46 ms further from its last detach than coreanalyze's monotonic clock had measured the
# whole stop, which only a step of the wall clock (or two CPUs' clocks apart) can do.
STRACE_CLOCK = ["-r", "--relative-timestamps=ns"]


def strace_unusable_reason():
    """None when strace is here and gives STRACE_CLOCK's times (Debian 12's strace 6.1 does),
    else why the traced case is skipped."""
    if not shutil.which("strace"):
        return "strace is not installed"
    probe = subprocess.run(["strace", "-f"] + STRACE_CLOCK + ["-e", "trace=none", "-o", os.devnull, "true"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    if probe.returncode != 0:
        said = probe.stderr.decode().strip().splitlines() or [""]
        return "this strace gives no %s: %s" % (" ".join(STRACE_CLOCK), said[0][:200])
    return None


def one_cpu():
    """strace and coreanalyze read their clocks on one CPU (run before exec; both inherit it): a
    VM's CPUs may keep clocks a fraction of a millisecond apart, and each takes turns with the
    other at every traced call anyway."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def pages_read(call):
    """The whole pages a process_vm_readv line of strace says were read (its return value)."""
    result = call.rsplit("=", 1)[-1].strip().split()[0] if "=" in call else ""
    return int(result) // 4096 if result.isdigit() else 0


def ptrace_windows(trace_text, pid):
    """The stop windows an strace -f -r log of coreanalyze shows (STRACE_CLOCK), as (inner, outer,
    [files opened inside], memory reads inside, pages read inside, pages of the last read before
    it): inner from each first PTRACE_INTERRUPT to the last PTRACE_DETACH before the next
    interrupt; outer from the setitimer that arms --max-stop's timer just before the interrupts to
    the first call after the last detach (setitimer or sched_setscheduler, as the stop is let go).
    coreanalyze's clock starts and stops between the two. Each line's time is the sum of the
    deltas so far: -r gives the monotonic time since the line before."""
    windows, current, armed_at, last_read_pages = [], None, None, 0
    at = 0.0
    for line in trace_text.splitlines():
        fields = line.split(None, 2)
        if len(fields) < 3:
            continue
        try:
            at += float(fields[1])
        except ValueError:
            continue
        call = fields[2]
        if call.startswith("ptrace(PTRACE_INTERRUPT"):
            if current is None or current["end"] is not None:
                current = {"start": at, "armed": armed_at if armed_at is not None else at, "end": None,
                           "released": None, "opened": [], "reads": 0, "pages": 0, "before": last_read_pages}
                windows.append(current)
        elif call.startswith("ptrace(PTRACE_DETACH") and current is not None:
            current["end"] = at
        elif call.startswith(("setitimer(", "sched_setscheduler(")):
            if current is not None and current["end"] is not None and current["released"] is None:
                current["released"] = at
            armed_at = at
        elif call.startswith("process_vm_readv(") and current is not None and current["end"] is None:
            current["reads"] += 1
            current["pages"] += pages_read(call)
        elif call.startswith("process_vm_readv("):
            last_read_pages = pages_read(call)
        elif call.startswith("openat(") and current is not None and current["end"] is None:
            path = call.split('"')[1] if '"' in call else call
            # Listing the threads again (threads started meanwhile) is the stop's own business.
            if path != "/proc/%d/task" % pid:
                current["opened"].append(path)
    return [((w["end"] - w["start"]) * 1000.0, ((w["released"] or w["end"]) - w["armed"]) * 1000.0, w["opened"],
             w["reads"], w["pages"], w["before"]) for w in windows if w["end"] is not None]


def traced_stop_case(coreanalyze, interpreter, workdir):
    """(label, problems, why it was skipped or None): live.stopped_ms and stops_ms against an
    outside trace of the ptrace calls (strace): one stop per window traced, each at least as long
    as its window and not much longer, no file opened while the process is held (the binaries are
    opened before), and its memory read there in a few batched calls, not page by page for each
    thread (MAX_WINDOW_READS; an OS thread without Python once read every thread's pthread page
    there), and fewer pages there than just before it: the pages read for the threads asleep in
    the kernel alone (and those of mappings the process cannot write) are read anew before the
    stop, not in it."""
    unusable = strace_unusable_reason()
    if unusable:
        return "stop windows traced", None, unusable
    ready = os.path.join(workdir, "stop_window.ready")
    program = subprocess.Popen([interpreter.executable, os.path.join(cores.PROGRAMS, "stop_window.py"), ready],
                               start_new_session=True)
    problems, totals, longest = [], [], []
    try:
        deadline = time.time() + RUN_TIMEOUT
        while not os.path.exists(ready) and time.time() < deadline and program.poll() is None:
            time.sleep(0.05)
        if not os.path.exists(ready):
            return "stop windows traced", ["stop_window.py never got ready"], None
        trace = os.path.join(workdir, "stop.trace")
        for _ in range(TRACED_STOP_RUNS):
            result = subprocess.run(["strace", "-f"] + STRACE_CLOCK + ["-e",
                                     "trace=ptrace,openat,setitimer,sched_setscheduler,process_vm_readv",
                                     "-o", trace,
                                     coreanalyze, "--pid", str(program.pid), "--json"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=RUN_TIMEOUT,
                                    env=untraceable_leak_check_off(), preexec_fn=one_cpu)
            if result.returncode != 0:
                problems.append("exit code %d: %s" % (result.returncode, result.stderr.decode().strip()))
                break
            live = json.loads(result.stdout)["live"]
            with open(trace) as log:
                windows = ptrace_windows(log.read(), program.pid)
            stops = live.get("stops_ms") or []
            if not windows:
                problems.append("strace saw no stop, yet the main thread spins")
                break
            if len(stops) != len(windows):
                problems.append("stops_ms %r, but strace saw %d stop windows" % (stops, len(windows)))
                continue
            for (inner_ms, outer_ms, opened, reads, pages, before), stop in zip(windows, stops):
                # coreanalyze's clock starts after arming the timer, before the first interrupt,
                # and stops after the last detach returns, before letting go of the rest: the
                # stop it reports lies between the two spans strace saw (timestamps to 1 us).
                if stop < inner_ms - 0.01 or stop > outer_ms + 0.01:
                    problems.append("a stop of %.3f ms reported for a window of %.3f ms traced (%.3f ms "
                                    "from the timer armed to the stop let go)" % (stop, inner_ms, outer_ms))
                if opened:
                    problems.append("opened %d file(s) while the process was stopped: %s"
                                    % (len(opened), ", ".join(opened[:3])))
                if reads > MAX_WINDOW_READS:
                    problems.append("%d process_vm_readv calls while the process was stopped (at most %d: "
                                    "the pages kept are read again in batches)" % (reads, MAX_WINDOW_READS))
                # SLEEPERS threads asleep in time.sleep, one spinning: most of what the walk reads
                # is the sleepers' frames and code, read before the stop.
                if pages >= before:
                    problems.append("%d pages read while the process was stopped, %d in the read just before "
                                    "the stop: the sleeping threads' pages are to be read before it"
                                    % (pages, before))
            if abs(live["stopped_ms"] - sum(stops)) > 0.01:
                problems.append("stopped_ms %.3f is not the sum of stops_ms %r" % (live["stopped_ms"], stops))
            if abs(live["longest_stop_ms"] - max(stops)) > 0.01:
                problems.append("longest_stop_ms %.3f is not the longest of %r" % (live["longest_stop_ms"], stops))
            totals.append(live["stopped_ms"])
            longest.append(live["longest_stop_ms"])
        problems += running_problems(program.pid, "after the traced runs")
    finally:
        program.kill()
        program.wait()
    label = "stop windows traced"
    if totals:
        label += " (median %.2f ms in all, longest %.2f ms, under strace)" % (statistics.median(totals), max(longest))
    return label, problems, None


def unthreaded_case(coreanalyze, interpreter):
    """A program that never imported threading: its one thread is MainThread, as Python calls it,
    though no thread object names it."""
    program = subprocess.Popen([interpreter.executable, "-S", os.path.join(cores.PROGRAMS, "unthreaded.py")],
                               stdout=subprocess.PIPE, start_new_session=True)
    try:
        loaded = program.stdout.readline().decode().strip()
        if loaded != "False":
            return ["the program has threading loaded (%r): nothing to check" % loaded]
        code, out, err = run(coreanalyze, [program.pid], ["--json"])
        if code != 0:
            return ["exit %d: %s" % (code, err[-300:])]
        names = [thread.get("name") for thread in json.loads(out).get("threads", [])]
        return [] if names == ["MainThread"] else ["thread names %r, want ['MainThread']" % names]
    finally:
        program.kill()
        program.wait()


def main():
    args = interpreters.driver_arguments(__doc__)
    results = Results()
    installed = list(interpreters.each_installed(args.interpreter or NAMES, results))
    workdirs = []

    def workdir_for(interpreter):
        workdirs.append(run_scenarios.scenario_workdir(interpreter, "hangpy-live-"))
        return workdirs[-1]

    try:
        for name, interpreter in installed:
            try:
                for label, problems in stacks_case(args.coreanalyze, interpreter, workdir_for(interpreter)):
                    results.check("%s deadlock --pid %s" % (name, label), problems)
            except (cores.CoreError, subprocess.TimeoutExpired) as error:
                results.check("%s deadlock --pid" % name, [str(error)])
        for name, interpreter in installed:
            if interpreter.root or interpreter.emulator:
                continue  # the host's interpreters: the chroots' run the same code
            results.check("%s a program that never imported threading: its thread is MainThread" % name,
                          unthreaded_case(args.coreanalyze, interpreter))
        for name, interpreter in installed:
            if name not in test_native.NAMES:
                continue
            try:
                results.check("%s deadlock --pid --native-all" % name,
                              native_case(args.coreanalyze, interpreter, workdir_for(interpreter)))
            except (cores.CoreError, subprocess.TimeoutExpired) as error:
                results.check("%s deadlock --pid --native-all" % name, [str(error)])
        stop_cases = [(n, i) for n, i in installed if n in STOP_CASE_NAMES or args.interpreter]
        for name, interpreter in stop_cases:
            try:
                results.check("%s mid-syscall threads (why_misc_waits.py)" % name,
                              syscall_case(args.coreanalyze, interpreter, workdir_for(interpreter)))
                for label, problems in release_cases(args.coreanalyze, interpreter,
                                                     workdir_for(interpreter)):
                    results.check("%s %s" % (name, label), problems)
            except (cores.CoreError, subprocess.TimeoutExpired) as error:
                results.check("%s stop cases" % name, [str(error)])
        if stop_cases:
            name, interpreter = stop_cases[0]
            problems = gdb_case(args.coreanalyze, interpreter, workdir_for(interpreter))
            if problems is None:
                results.report("SKIP", "%s traced by gdb" % name, ["gdb is not installed"])
            else:
                results.check("%s already traced by gdb" % name, problems)
            problems = permission_case(args.coreanalyze, interpreter, workdir_for(interpreter))
            if isinstance(problems, str):  # why it cannot run here
                results.report("SKIP", "%s not permitted" % name, [problems])
            else:
                results.check("%s not permitted (another user, no CAP_SYS_PTRACE)" % name, problems)
            label, problems = stop_time_case(args.coreanalyze, interpreter, workdir_for(interpreter))
            results.check("%s %s" % (name, label), problems)
            host = [(n, i) for n, i in stop_cases if not i.root and not i.emulator]
            if host:
                host_name, host_interpreter = host[0]
                label, problems, skipped = traced_stop_case(args.coreanalyze, host_interpreter,
                                                            workdir_for(host_interpreter))
                if skipped:
                    results.report("SKIP", "%s %s" % (host_name, label), [skipped])
                else:
                    results.check("%s %s" % (host_name, label), problems)
            several = (stop_cases * 2)[:max(2, min(3, len(stop_cases)))]
            results.check("several PIDs (%s)" % ", ".join(n for n, _ in several),
                          several_pids_case(args.coreanalyze, [i for _, i in several],
                                            [workdir_for(i) for _, i in several]))
    finally:
        for workdir in workdirs:
            shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
