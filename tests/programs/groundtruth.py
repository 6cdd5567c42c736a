# -*- coding: utf-8 -*-
"""Ground truth for the scenario programs: the interpreter's own view of its stacks.

Every scenario program calls start(output_path, blockers=N) first and then, in each of its N
threads, announce_blocking() immediately before the call that blocks forever. A "reporter" thread
waits until all N threads have announced (and no other thread is alive), lets them settle into
their blocking call, takes sys._current_frames() and writes, atomically,

  {"pid": ..., "version": "X.Y.Z", "reporter_native_id": ... or null,
   "threads": {"<ident>": {"native_id": ... or null, "name": ... or null,
                           "frames": [[file, line, function], ...],      # outermost first
                           "first_lines": [co_firstlineno, ...],         # same order
                           "qualnames": [co_qualname, ...],              # 3.11+ only
                           "positions": [[line, end_line, column, end_column], ...]}},
                                         # 3.11+ only: the current instruction's PEP 657
                                         # position, as a traceback through it shows it
   "os_threads": [every kernel thread id of the process, the reporter's included],
   "ppid": ..., "uid": ..., "gid": ..., "finalizing": false,
   "locals": {"<function>": {"<name>": "<expected repr>"}},  # only if expect_locals() was called
   "calls": ["<built-in method ...>", ...],  # only if expect_call() was called
   "returned_calls": ["<built-in method ...>", ...],  # only if returned_call() was called
   "<section>": ...,                         # whatever record_section() was given
   "waits": {"<ident>": {"kind": "lock", "object": "0x...",     # expect_wait(): what the thread
                         "owner_native_id": ... or absent,     # blocks on, the thread that could
                         "owner_self": true or absent}},       # end the wait, held locks
   "held_locks": {"<ident>": ["0x...", ...]},                  # expect_holds()
   "deadlocks": [[native_id, ...], ...]}     # expect_deadlock(): each cycle, in wait order


and then exits, so that it is not part of a core taken afterwards. A program that cannot run
on this interpreter writes {"skip": "reason"} instead (see skip()).

Stdlib only, and it must run on Python 2.7 and 3.6 onwards: no f-strings, no nonlocal.
"""
import json
import os
import sys
import threading
import time
import traceback

# Time between "every thread announced" and the snapshot: the announcing thread still has to
# make the blocking call and enter it.
SETTLE_SECONDS = 0.2
# A scenario whose threads never all announce is broken; give up instead of hanging the test.
ANNOUNCE_TIMEOUT_SECONDS = 20.0

_announced = set()
_announced_cond = threading.Condition()
_expectations = {}
_os_thread_ids = {}  # ident -> the kernel's thread id, where the interpreter cannot say (< 3.8)
_expected_locals = {}  # function name -> {local name: the repr hangpy must print}


_expected_calls = []  # the built-in calls a reader of the core must name, as libpython does
_returned_calls = []  # built-in calls that returned: a reader must not name them
_sections = {}  # extra top-level keys of the ground truth, e.g. "asyncio" (record_section)
# The diagnosis the program knows of itself (issue 33): what each thread blocks on and who could
# end that wait, the locks it holds through `with`, and the cycles its threads wait in.
_waits = {}  # ident -> {"kind": ..., "object": id or None, "owner": Thread, "self" or None}
_holds = {}  # ident -> [id of each lock the thread holds through `with`]
_cycles = []  # [[Thread, ...], ...] in wait order: each waits for the next, the last for the first


def expect_locals(function, reprs):
    """Record the reprs of `function`'s locals that a reader of the core must show."""
    _expected_locals[function] = dict(reprs)


def expect_call(line):
    """Record a built-in call in progress, named as libpython.py's py-bt names it."""
    _expected_calls.append(line)


def returned_call(line):
    """Record a built-in call that ran and returned before the thread blocked: its object may
    still be on the native stack, but a reader must not name it as a call in progress."""
    _returned_calls.append(line)


def record_section(key, document):
    """Store `document` (JSON data the program gathered about itself, e.g. its asyncio tasks)
    under the top-level `key` of the ground truth."""
    _sections[key] = document


def expect_wait(kind, waited=None, owner=None):
    """Record, from the blocking thread itself, what it is about to block on: `kind` as hangpy
    names it (lock, rlock, event, condition, join, read, ...), the object waited for (its id()
    is its address, which is what a reader of the core names) and the thread that could end the
    wait: a threading.Thread, "self" for a lock this very thread acquired earlier, or None when
    no thread could (or the program does not know)."""
    _waits[_ident()] = {"kind": kind, "object": None if waited is None else id(waited),
                        "owner": owner}


def expect_holds(*locks):
    """Record that the calling thread holds `locks` through `with` blocks while it blocks."""
    _holds.setdefault(_ident(), []).extend(id(lock) for lock in locks)


def expect_deadlock(*threads):
    """Record a cycle of threads (threading.Thread objects) waiting for each other, in wait
    order: each waits for the next, the last for the first."""
    _cycles.append(list(threads))


def _address(value):
    return "0x%x" % value


def _diagnosis(me):
    """The "waits", "held_locks" and "deadlocks" sections of the ground truth."""
    waits = {}
    for ident, wait in _waits.items():
        entry = {"kind": wait["kind"]}
        if wait["object"] is not None:
            entry["object"] = _address(wait["object"])
        owner = wait["owner"]
        if owner == "self":
            entry["owner_self"] = True
        elif owner is not None:
            entry["owner_native_id"] = _native_id(owner)
        waits[str(ident)] = entry
    held = dict((str(ident), [_address(lock) for lock in locks])
                for ident, locks in _holds.items())
    cycles = [[_native_id(thread) for thread in cycle] for cycle in _cycles]
    return {"waits": waits, "held_locks": held, "deadlocks": cycles}


def _ident():
    if hasattr(threading, "get_ident"):
        return threading.get_ident()
    return threading.current_thread().ident  # Python 2.7


def _native_id(thread):
    # Thread.native_id appeared in 3.8; before that, the kernel's answer recorded by the thread
    # itself in announce_blocking().
    native = getattr(thread, "native_id", None)
    if native is None:
        native = _os_thread_ids.get(thread.ident)
    return native


def _gettid():
    """The calling thread's kernel thread id, through gettid(2) (x86-64 Linux: syscall 186)."""
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).syscall(186)
    except Exception:  # no ctypes in this build: the thread's id stays unknown
        return None


def _text(value):
    # On 2.7 co_filename and co_name are byte strings in the file system encoding (UTF-8 here).
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def current_native_id():
    """The calling thread's kernel thread id: Thread.native_id from 3.8, gettid(2) before."""
    return getattr(threading.current_thread(), "native_id", None) or _gettid()


def announce_blocking():
    """Call in each scenario thread right before the call that blocks forever."""
    if not hasattr(threading.Thread, "native_id"):
        _os_thread_ids[_ident()] = _gettid()
    with _announced_cond:
        _announced.add(_ident())
        _announced_cond.notify_all()


def announce_already_blocked(thread):
    """Announce a thread the scenario did not start and which is already blocked, as
    multiprocessing's queue feeder threads are, waiting for something to send."""
    with _announced_cond:
        _announced.add(thread.ident)
        _announced_cond.notify_all()


def expect(**facts):
    """Facts the program knows about itself for a test to check (a child's pid...), written with
    the ground truth under "expect"."""
    _expectations.update(facts)


def held_lock():
    """A lock that is already held: acquire() on it blocks forever, always on the same line."""
    lock = threading.Lock()
    lock.acquire()
    return lock


def _position(frame):
    """[line, end_line, column, end_column] of the frame's current instruction as a traceback
    through it would show it (3.11+: PEP 657 positions), else None. extract_stack leaves the
    columns out, so this asks the code object the way traceback does for a traceback."""
    if not hasattr(frame.f_code, "co_positions"):
        return None
    get_position = getattr(traceback, "_get_code_position", None)
    if get_position is not None:
        return list(get_position(frame.f_code, frame.f_lasti))
    return list(list(frame.f_code.co_positions())[frame.f_lasti // 2])


def _frames_of(frame):
    """[file, line, function] outermost first, exactly as traceback.extract_stack reports them,
    plus each frame's code object details that extract_stack leaves out."""
    summary = traceback.extract_stack(frame)
    frames = [[_text(entry[0]), entry[1], _text(entry[2])] for entry in summary]

    codes = []
    positions = []
    while frame is not None:
        codes.append(frame.f_code)
        positions.append(_position(frame))
        frame = frame.f_back
    codes.reverse()
    positions.reverse()
    if None in positions:
        positions = None
    if len(codes) != len(frames):  # extract_stack honours no limit here; this would be a bug
        raise RuntimeError("frame walk and extract_stack disagree")
    first_lines = [code.co_firstlineno for code in codes]
    qualnames = None
    if hasattr(codes[0] if codes else None, "co_qualname"):  # code objects carry it from 3.11
        qualnames = [_text(code.co_qualname) for code in codes]
    return frames, first_lines, qualnames, positions


def _snapshot():
    me = _ident()
    by_ident = dict((t.ident, t) for t in threading.enumerate())
    threads = {}
    for ident, frame in sys._current_frames().items():
        if ident == me:
            continue
        thread = by_ident.get(ident)
        frames, first_lines, qualnames, positions = _frames_of(frame)
        entry = {
            "native_id": _native_id(thread) if thread is not None else None,
            "name": _text(thread.name) if thread is not None else None,
            "frames": frames,
            "first_lines": first_lines,
        }
        if qualnames is not None:
            entry["qualnames"] = qualnames
        if positions is not None:
            entry["positions"] = positions
        threads[str(ident)] = entry
    document = {
        "pid": os.getpid(),
        "version": "%d.%d.%d" % tuple(sys.version_info[:3]),
        # The reporter runs this: before 3.8 it asks the kernel itself.
        "reporter_native_id": _native_id(threading.current_thread()) or _gettid(),
        "threads": threads,
        "os_threads": sorted(int(task) for task in os.listdir("/proc/self/task")),
        "ppid": os.getppid(),
        "uid": os.getuid(),
        "gid": os.getgid(),
        "finalizing": False,  # the scenarios block while the program runs, not at its exit
        "expect": dict(_expectations),
    }
    if _expected_locals:
        document["locals"] = _expected_locals
    if _expected_calls:
        document["calls"] = _expected_calls
    if _returned_calls:
        document["returned_calls"] = _returned_calls
    if _waits or _holds or _cycles:
        document.update(_diagnosis(me))
    document.update(_sections)
    return document


def _write_atomically(path, document):
    tmp = path + ".tmp"
    with open(tmp, "w") as out:
        out.write(json.dumps(document, indent=1, sort_keys=True))
        out.write("\n")
    os.rename(tmp, path)  # readers never see a half-written file


def _all_others_announced(blockers):
    me = _ident()
    others = set(sys._current_frames()) - set([me])
    return len(_announced) >= blockers and others <= _announced


def _report(path, blockers):
    deadline = time.time() + ANNOUNCE_TIMEOUT_SECONDS
    with _announced_cond:
        while not _all_others_announced(blockers):
            left = deadline - time.time()
            if left <= 0:
                sys.stderr.write("groundtruth: only %d of %d threads announced\n"
                                 % (len(_announced), blockers))
                return
            _announced_cond.wait(min(left, 0.5))
    time.sleep(SETTLE_SECONDS)
    _write_atomically(path, _snapshot())
    # Returning ends this thread, so the core holds only the scenario's threads.


def start(path, blockers):
    """Start the reporter; `blockers` threads will call announce_blocking()."""
    reporter = threading.Thread(target=_report, args=(path, blockers), name="groundtruth-reporter")
    reporter.daemon = True
    reporter.start()
    return reporter


def skip(path, reason):
    """Record that this scenario does not apply to this interpreter, and exit."""
    _write_atomically(path, {"skip": reason, "pid": os.getpid()})
    sys.exit(0)


def _descend_and_block(depth, lock):
    if depth > 1:
        return _descend_and_block(depth - 1, lock)
    announce_blocking()
    lock.acquire()  # held: never returns


def block_in_deep_threads(path, count, depth, name):
    """The benchmarks' processes: starts the reporter, then `count` threads named NAME-i, each
    `depth` Python frames deep in this file and blocked on one held lock; blocks the caller."""
    start(path, blockers=count + 1)
    lock = held_lock()
    workers = [threading.Thread(target=_descend_and_block, args=(depth, lock),
                                name="%s-%d" % (name, i)) for i in range(count)]
    for worker in workers:
        worker.start()
    announce_blocking()
    workers[0].join()


def start_native_thread():
    """Starts an OS thread that never runs Python (as NCCL, gloo or OpenMP threads do): libc's
    sleep(3600) as the thread's start routine, through ctypes. Returns False without ctypes."""
    try:
        import ctypes
    except ImportError:
        return False
    libc = ctypes.CDLL(None)
    thread = ctypes.c_ulong()
    routine = ctypes.cast(libc.sleep, ctypes.c_void_p)
    # sleep(unsigned) receives the start routine's argument in the same register.
    return libc.pthread_create(ctypes.byref(thread), None, routine, ctypes.c_void_p(3600)) == 0


def output_path():
    """The one command-line argument every scenario program takes."""
    if len(sys.argv) != 2:
        sys.stderr.write("usage: %s GROUND_TRUTH_JSON\n" % sys.argv[0])
        sys.exit(2)
    return os.path.abspath(sys.argv[1])


def marker_line(path, marker):
    """The number of the line of `path` that ends with the comment `# MARKER` (a program's own
    blocking line, named in its ground truth); None when there is none."""
    with open(path) as source:
        for number, line in enumerate(source, 1):
            if line.rstrip().endswith("# " + marker) or ("# " + marker + ":") in line:
                return number
    return None


def write_json(path, document):
    """`document` to `path`, atomically (a reader polling for the file never sees half of it)."""
    with open(path + ".tmp", "w") as out:
        json.dump(document, out)
    os.rename(path + ".tmp", path)

