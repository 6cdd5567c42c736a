#!/usr/bin/python3
"""Integration test: who holds the other end of the pipe a thread blocks reading (issue 21), on
real processes of several interpreters (tests/programs/pipe_ends.py writes which process holds
which end before its children read):

- `--pid` of the child that kept the write end it inherited: its read names that pipe's write end
  as held by the process itself, by fd, and says no end of file can come;
- `--pid` of the child whose pipe the parent holds: the write end is held by the parent, by PID
  and fd.

Exit status: 0 passed, 1 failed, 77 no interpreter of the list is installed.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
from blocked_program import BlockedProgram, NeverBlocked  # noqa: E402
import interpreters  # noqa: E402
import run_scenarios  # noqa: E402
from results import Results  # noqa: E402

NAMES = ("debian-3.11", "pyenv-2.7", "pyenv-3.12")
RUN_TIMEOUT = 60


def main_thread_wait(coreanalyze, pid, problems):
    document = run_scenarios.json_of([coreanalyze, "--pid", str(pid), "--json"], problems, RUN_TIMEOUT)
    threads = (document or {}).get("threads") or []
    return ((threads[0].get("blocked_on") or {}).get("description") or "") if threads else ""


def one_interpreter(coreanalyze, interpreter, workdir):
    truth_path = os.path.join(workdir, "truth.json")
    program_dir = cores.install_programs(os.path.join(workdir, "programs")) if interpreter.root else cores.PROGRAMS
    argv = interpreter.command(interpreter.guest_path(workdir), [
        interpreter.guest_path(os.path.join(program_dir, "pipe_ends.py")), interpreter.guest_path(truth_path)])
    try:
        with BlockedProgram(argv, workdir, truth_path, env=cores.scenario_environment()) as program:
            truth = program.truth
            problems = []
            own = main_thread_wait(coreanalyze, truth["own_end_pid"], problems)
            want = "fd %d is pipe:[" % truth["own_end_read_fd"]
            tail = "its write end held by this process (fd %d): no end of file can come" % truth["own_end_write_fd"]
            if want not in own or tail not in own:
                problems.append("the child that kept its write end: blocked on %r, want %r ... %r" % (own, want, tail))
            other = main_thread_wait(coreanalyze, truth["parent_end_pid"], problems)
            want = "its write end held by PID %d (" % truth["parent_pid"]
            fd = ", fd %d)" % truth["parent_write_fd"]
            if want not in other or fd not in other or "no end of file" in other:
                problems.append("the child whose write end its parent holds: blocked on %r, want %r ... %r"
                                % (other, want, fd))
            return problems
    except NeverBlocked as error:
        return [str(error)]


def main():
    args = interpreters.driver_arguments(__doc__)
    results = Results()
    run_scenarios.check_in_workdirs(
        args.interpreter or NAMES, results, "hangpy-pipes-", "%s: who holds the other end of a pipe a read waits on",
        lambda interpreter, workdir: one_interpreter(args.coreanalyze, interpreter, workdir))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
