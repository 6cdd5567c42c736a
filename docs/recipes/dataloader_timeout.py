"""Save the stacks of stuck DataLoader workers when `DataLoader(timeout=...)` gives up.

    from dataloader_timeout import capture_on_timeout
    loader = DataLoader(dataset, num_workers=4, timeout=600)
    for batch in capture_on_timeout(loader):
        ...

When no batch comes within `timeout` seconds, torch raises RuntimeError("DataLoader timed out
after N seconds") from the iterator's __next__, its workers still alive (they are shut down only
when the iterator is deleted). capture_on_timeout holds the iterator, runs

    coreanalyze collect --pid <this process> --cores snapshot --output DIR

(the workers and any other child; the collector never reads its own ancestors, so not this
process, whose stack the traceback shows anyway), and raises DataLoaderTimeout, a RuntimeError
whose message holds the verdict (DIR/triage.txt) and which has the original error as __cause__.

Environment: HANGPY_COREANALYZE (default: coreanalyze on PATH), HANGPY_CAPTURE_DIR (default
./hangpy-captures; each capture in a subdirectory dataloader-PID-TIME), HANGPY_CAPTURE_TIMEOUT
(seconds, default 60). Needs nothing but torch.
"""
import ctypes
import os
import signal
import subprocess
import time

PR_SET_PTRACER = 0x59616D61  # Yama's "this process may trace me"


class DataLoaderTimeout(RuntimeError):
    """DataLoader timed out; the message says where the stuck workers were."""


class TraceableWorkerInit(object):
    """A worker_init_fn that lets the main process and its children (the collector) ptrace this
    worker under kernel.yama.ptrace_scope=1, where only ancestors may, then calls `then`.
    A class, not a closure, so that it pickles for multiprocessing_context="spawn"."""

    def __init__(self, then=None):
        self.then = then

    def __call__(self, worker_id):
        # Without Yama the call fails harmlessly (EINVAL).
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PTRACER, ctypes.c_ulong(os.getppid()), 0, 0, 0)
        if self.then is not None:
            self.then(worker_id)


def capture_on_timeout(loader, output_dir=None, coreanalyze=None):
    """Iterate over `loader` like `for batch in loader`; on its timeout, capture and raise
    DataLoaderTimeout. Arms loader.worker_init_fn with TraceableWorkerInit (keeping the user's)."""
    if not isinstance(loader.worker_init_fn, TraceableWorkerInit):
        loader.worker_init_fn = TraceableWorkerInit(loader.worker_init_fn)
    iterator = iter(loader)
    while True:
        try:
            batch = next(iterator)
        except StopIteration:
            return
        except RuntimeError as error:
            if "DataLoader timed out" not in str(error):
                raise
            # `iterator` is still referenced here: its workers are alive while we read them.
            message = capture(iterator, output_dir, coreanalyze)
            raise DataLoaderTimeout("%s\n%s" % (error, message)) from error
        yield batch


def awaited_workers(iterator):
    """PIDs of the worker(s) owing the batch the main process waits for (torch's private state,
    so guarded), else every worker's."""
    workers = getattr(iterator, "_workers", [])
    try:
        return [workers[iterator._task_info[iterator._rcvd_idx][0]].pid]
    except (AttributeError, KeyError, IndexError, TypeError):
        return [worker.pid for worker in workers]


def capture(iterator, output_dir=None, coreanalyze=None):
    """Run the collector on this process's children; return what to tell the user."""
    coreanalyze = coreanalyze or os.environ.get("HANGPY_COREANALYZE", "coreanalyze")
    base = output_dir or os.environ.get("HANGPY_CAPTURE_DIR", "hangpy-captures")
    limit = float(os.environ.get("HANGPY_CAPTURE_TIMEOUT", "60"))
    out = os.path.abspath(os.path.join(
        base, "dataloader-%d-%s" % (os.getpid(), time.strftime("%Y%m%d-%H%M%S"))))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    head = "waiting for the batch of DataLoader worker PID(s) %s; stacks saved in %s" % (
        ", ".join(map(str, awaited_workers(iterator))), out)
    try:
        # A session of its own, so that a timeout ends the collector and its children.
        child = subprocess.Popen([coreanalyze, "collect", "--pid", str(os.getpid()), "--cores",
                                  "snapshot", "--output", out,
                                  "--timeout", str(max(1, int(limit) - 5))],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
        try:
            stdout, stderr = child.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return "%s\n(coreanalyze collect killed after %g s)" % (head, limit)
    except OSError as error:
        return "%s\n(coreanalyze collect did not run: %s)" % (head, error)
    try:
        with open(os.path.join(out, "triage.txt"), errors="replace") as verdict:
            text = verdict.read()
    except OSError:  # a coreanalyze without triage.txt prints the verdict, or says why not
        text = stdout.decode(errors="replace") or stderr.decode(errors="replace")
    # The verdict and the merged tree; each group's full stacks stay in the file.
    text, more, _ = text.partition("\nGroup 1 of ")
    tail = "\n(each group's stacks: triage.txt there)" if more else ""
    return "%s\n%s%s" % (head, text.rstrip(), tail)
