"""Compare coreanalyze's diagnosis with what the program knew of itself before it blocked.

The ground truth's "waits", "held_locks" and "deadlocks" sections (tests/programs/groundtruth.py:
expect_wait, expect_holds, expect_deadlock) are written by the threads themselves: what each one
is about to block on (its id(), which is the object's address), the thread that could end the
wait, the locks it holds through `with`, the cycle the threads wait in. This module checks
coreanalyze's `blocked_on`, `state.held_locks` and `deadlocks` against them; a ground truth
without those sections (a program that records none) is not checked here.
"""
import re


def _wait_problems(ident, want, thread, others):
    """What is wrong with one thread's blocked_on against the wait it announced; `others`:
    the process has threads besides this one (the ground truth's os_threads, the reporter's
    aside, which has ended when the core is taken)."""
    blocked = thread.get("blocked_on") or {}
    where = "thread %s (%s)" % (ident, thread.get("name"))
    problems = []
    syscall = (thread.get("state") or {}).get("syscall") or {}
    if syscall and syscall.get("arguments") is None and blocked.get("kind") == "syscall":
        # The core lost the call's arguments (an aarch64 qemu core: the call had just returned
        # when the core was made), and the Python frames do not tell the wait either: the core
        # does not hold what the thread waits on. The report must say so, not guess.
        if "arguments are lost" not in (blocked.get("description") or ""):
            problems.append("%s: the call's arguments are lost, and blocked_on does not say so (%s)"
                            % (where, blocked.get("description")))
        return problems
    if blocked.get("kind") != want["kind"]:
        problems.append("%s: blocked_on.kind %r, want %r (%s)"
                        % (where, blocked.get("kind"), want["kind"], blocked.get("description")))
        return problems
    if "object" in want and blocked.get("object") != want["object"]:
        problems.append("%s: blocked_on.object %r, want %r"
                        % (where, blocked.get("object"), want["object"]))
    owner = blocked.get("owner_native_thread_id")
    if "owner_native_id" in want and owner != want["owner_native_id"]:
        problems.append("%s: blocked_on.owner_native_thread_id %r, want %r (%s)"
                        % (where, owner, want["owner_native_id"], blocked.get("description")))
    if want.get("owner_self"):
        # The thread acquired the lock itself, without `with`: a plain Lock keeps no owner, so a
        # reader must not name another thread. Where no other thread exists it must say that
        # nobody here can release it (holder_gone); where threads running no Python exist, it
        # may also say it cannot tell (one of them could release it through the C API).
        own = thread.get("native_thread_id")
        if owner is not None and owner != own:
            problems.append("%s: blocked_on names LWP %r as the holder of a lock the thread "
                            "acquired itself" % (where, owner))
        elif owner is None and not blocked.get("holder_gone") and not (
                others and blocked.get("owner_unknown")):
            problems.append("%s: a lock only %s could release, but blocked_on says %s"
                            % (where, "this thread" if not others else "this thread or a thread "
                               "running no Python", blocked.get("description")))
    return problems


OBJECTS_NAMED_IN_TEXT = ("lock", "rlock", "event", "condition", "semaphore")


def _rotations(cycle):
    return [tuple(cycle[i:] + cycle[:i]) for i in range(len(cycle))]


def compare(truth, report):
    """Problems (strings); empty when the diagnosis matches the ground truth or it has none."""
    if "waits" not in truth and "deadlocks" not in truth:
        return []
    problems = []
    found = dict((str(thread.get("thread_id")), thread) for thread in report.get("threads") or [])
    for ident, want in sorted((truth.get("waits") or {}).items()):
        if ident in found:  # a missing thread is reported by compare_json
            own = truth["threads"][ident].get("native_id")
            others = set(truth.get("os_threads") or []) - set([own, truth.get("reporter_native_id")])
            problems += _wait_problems(ident, want, found[ident], bool(others))
    for ident, locks in sorted((truth.get("held_locks") or {}).items()):
        if ident not in found:
            continue
        held = sorted((found[ident].get("state") or {}).get("held_locks") or [])
        if held != sorted(locks):
            problems.append("thread %s: state.held_locks %r, want %r" % (ident, held, sorted(locks)))
    want_cycles = [tuple(cycle) for cycle in truth.get("deadlocks") or []]
    got_cycles = [tuple(member.get("native_thread_id") for member in deadlock.get("threads") or [])
                  for deadlock in report.get("deadlocks") or []]
    unmatched = list(got_cycles)
    for cycle in want_cycles:
        match = [got for got in unmatched if got in _rotations(list(cycle))]
        if match:
            unmatched.remove(match[0])
        else:
            problems.append("deadlock of LWPs %s (in wait order) missing; coreanalyze found %s"
                            % (list(cycle), [list(got) for got in got_cycles] or "none"))
    for got in unmatched:
        problems.append("deadlock of LWPs %s reported, but the program knows of no such cycle"
                        % list(got))
    return problems + _blocked_loop_problems(truth, report)


def _runs_loop_callback(frames):
    """Whether a thread's frames (outermost first) run a callback of an asyncio event loop
    (asyncio/events.py's Handle._run): its loop does nothing else until the callback returns."""
    return any(name == "_run" and file_name.endswith("asyncio/events.py")
               for file_name, _, name in frames)


def _blocked_loop_problems(truth, report):
    """A thread the program says blocks (its "waits") inside a loop's callback, a task's step,
    blocks that loop: where coreanalyze read the tasks (a running task says which thread runs
    it), `blocked_loops` names exactly those threads."""
    tasks = (report.get("asyncio") or {}).get("tasks") or []
    if not any(task.get("state") == "running" for task in tasks):
        # No tasks read (2.7, 3.6, no asyncio), or none running: no loop is blocked by a task.
        # A running task whose document lacks a thread_id (qemu's aarch64 cores) is checked all
        # the same: coreanalyze tells its thread by the frame the task runs.
        return []
    want = sorted(truth["threads"][ident]["native_id"] for ident in (truth.get("waits") or {})
                  if _runs_loop_callback(truth["threads"][ident]["frames"]))
    got = sorted(loop.get("native_thread_id") for loop in report.get("blocked_loops") or [])
    if got != want:
        return ["blocked_loops names LWPs %s, want %s (the threads that block inside a loop's "
                "callback): %r" % (got, want, report.get("blocked_loops"))]
    return []


def compare_text(truth, blocks, text):
    """Problems with the text's diagnosis: under each thread's header (`blocks`: {thread id:
    (header, lines)}) a `Blocked on:` line naming the object waited for and the owner's LWP, and
    a `deadlock:` line naming every LWP of each cycle the program knows."""
    problems = []
    for ident, want in sorted((truth.get("waits") or {}).items()):
        if int(ident) not in blocks:
            continue  # compare.compare_text reports the missing block
        lines = [line.strip() for line in blocks[int(ident)][1]]
        blocked = next((line for line in lines if line.startswith("Blocked on:")), None)
        if blocked is None:
            problems.append("text output: thread %s has no 'Blocked on:' line" % ident)
            continue
        if "arguments are lost" in blocked:
            continue  # the core does not hold what it waits on (see _wait_problems)
        wanted = []
        # The text names a synchronisation object by its address; a join names the thread.
        if "object" in want and want["kind"] in OBJECTS_NAMED_IN_TEXT:
            wanted.append(want["object"])
        if "owner_native_id" in want:
            wanted.append("(LWP %d)" % want["owner_native_id"])
        for part in wanted:
            if part not in blocked:
                problems.append("text output: thread %s: %r does not name %s" % (ident, blocked, part))
    for loop in re.findall(r"^blocked event loop: .*$", text, re.M) if "waits" in truth else []:
        if not any("(LWP %d)" % truth["threads"][ident]["native_id"] in loop
                   for ident in (truth.get("waits") or {})
                   if _runs_loop_callback(truth["threads"][ident]["frames"])):
            problems.append("text output: %r names no thread that blocks in a loop's callback" % loop)
    deadlock_lines = [line for line in text.splitlines() if line.startswith("deadlock:")]
    for cycle in truth.get("deadlocks") or []:
        if not any(all("(LWP %d)" % lwp in line for lwp in cycle) for line in deadlock_lines):
            problems.append("text output: no 'deadlock:' line names LWPs %s (lines: %r)"
                            % (cycle, deadlock_lines))
    return problems
