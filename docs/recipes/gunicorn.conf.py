"""gunicorn config: save a timed-out worker's Python stacks before the arbiter kills it.

    gunicorn -c gunicorn.conf.py --timeout 30 app:app

On a worker timeout gunicorn's arbiter (Arbiter.murder_workers; read in gunicorn 20.1) sends
the worker SIGABRT, and SIGKILL on its next pass (about a second later) if it still lives. A
hook inside the worker (worker_abort) never runs when the worker is stuck in C code holding the
GIL, so the arbiter does the capture: before it sends that SIGABRT it runs

    coreanalyze collect --pid WORKER --cores snapshot --output $HANGPY_CAPTURE_DIR/worker-PID-TIME

which leaves the worker's stacks as JSON, a snapshot core and the verdict (triage.txt) there.

Environment: HANGPY_COREANALYZE (default: coreanalyze on PATH), HANGPY_CAPTURE_DIR (default:
./hangpy-captures), HANGPY_CAPTURE_TIMEOUT (seconds, default 60: the arbiter waits this long at
most, and serves no signal meanwhile). Have a config already? Copy when_ready and post_fork (and
capture) into it.
"""
import ctypes
import os
import signal
import subprocess
import time

COREANALYZE = os.environ.get("HANGPY_COREANALYZE", "coreanalyze")
CAPTURE_DIR = os.path.abspath(os.environ.get("HANGPY_CAPTURE_DIR", "hangpy-captures"))
CAPTURE_TIMEOUT = float(os.environ.get("HANGPY_CAPTURE_TIMEOUT", "60"))
PR_SET_PTRACER = 0x59616D61  # Yama's "this process may trace me"


def post_fork(server, worker):
    """In the new worker: under kernel.yama.ptrace_scope=1 only ancestors may ptrace a process,
    and the collector the arbiter starts is the worker's sibling. Name the arbiter as tracer
    (Yama lets it and its descendants trace). Without Yama the call fails harmlessly (EINVAL)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PTRACER, ctypes.c_ulong(server.pid), 0, 0, 0)


def capture(server, pid):
    """Run the collector on worker `pid` (and its children) while it is still alive."""
    out = os.path.join(CAPTURE_DIR, "worker-%d-%s" % (pid, time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(CAPTURE_DIR, exist_ok=True)
    # The arbiter's SIGCHLD handler reaps any child (waitpid(-1)) and halts gunicorn when one
    # exits with status 3 or 4 (its "worker failed to boot"/"app failed to load"), which are
    # also collect's exit codes: hold SIGCHLD back until our child has been waited for.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])
    try:
        with open(out + ".log", "wb") as log:
            # A session of its own, so that a timeout ends the collector and its children.
            child = subprocess.Popen([COREANALYZE, "collect", "--pid", str(pid), "--cores",
                                      "snapshot", "--output", out,
                                      "--timeout", str(max(1, int(CAPTURE_TIMEOUT) - 5))],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     start_new_session=True)
            try:
                code = child.wait(timeout=CAPTURE_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                code = "killed after %g s" % CAPTURE_TIMEOUT
                child.wait()
        server.log.critical("hangpy: stacks of worker %d saved in %s (collect: exit %s; "
                            "log %s.log)", pid, out, code, out)
    except Exception as error:  # a failed capture must never stop the arbiter from killing
        server.log.error("hangpy: capture of worker %d failed: %s", pid, error)
    finally:
        # Drop our child's SIGCHLD: its handler would wake the arbiter at once, and the SIGKILL
        # pass would follow the SIGABRT with no time for the worker to exit (worker_abort). A
        # worker that died meanwhile is reaped at the next SIGCHLD (the aborted worker's).
        signal.sigtimedwait([signal.SIGCHLD], 0)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def when_ready(server):
    """Wrap the arbiter's kill_worker: SIGABRT is what murder_workers sends a timed-out worker
    (shutdown and reload send SIGTERM/SIGQUIT/SIGKILL), so capture first, then kill."""
    kill_worker = server.kill_worker

    def capture_then_kill(pid, sig):
        if sig == signal.SIGABRT:
            capture(server, pid)
        kill_worker(pid, sig)

    server.kill_worker = capture_then_kill
