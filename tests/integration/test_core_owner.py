#!/usr/bin/python3
"""Integration test (issue 35, item 1): a core's owner ids are trusted for source lines only when
the core is known to come from this machine. A real Debian python3.11 process blocks in a module
whose file only its owner may read (mode 0600, tests/programs/blocked_program.py's kind of
ground truth: the line it blocks at). Its gcore:

- with no host recorded (no HOSTNAME in its environment): the private file's line is not quoted,
  a world-readable file's (threading.py) still is, and one note says why (not known to come from
  this machine; --sysroot);
- with HOSTNAME set to this machine's name: the private line is quoted (its owner could read it);
- with HOSTNAME of another machine: not quoted, the note names that host.

Exit status: 0 passed, 1 failed, 77 Debian's python3.11 is not installed.
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cores  # noqa: E402
from results import Results  # noqa: E402

PYTHON = "/usr/bin/python3.11"
PRIVATE_LINE = "gate.wait()  # PRIVATE-WAITS"
MODULE = '''import json, os, sys, threading
def block(truth_path):
    gate = threading.Event()
    with open(truth_path + ".tmp", "w") as out:
        json.dump({"pid": os.getpid()}, out)
    os.rename(truth_path + ".tmp", truth_path)
    %s
''' % PRIVATE_LINE


def run_case(coreanalyze, workdir, host):
    """(stdout, stderr) of coreanalyze on a gcore of the program, HOSTNAME=host (None: unset)."""
    truth_path = os.path.join(workdir, "truth-%s.json" % host)
    environment = dict((k, v) for k, v in os.environ.items() if k != "HOSTNAME")
    if host is not None:
        environment["HOSTNAME"] = host
    process = subprocess.Popen([PYTHON, "-c", "import sys; sys.path.insert(0, %r); import private_module; "
                                "private_module.block(%r)" % (workdir, truth_path)],
                               stdin=subprocess.DEVNULL, start_new_session=True, env=environment)
    try:
        truth = cores.truth_when_blocked(process, truth_path, 30)
        if truth is None:
            raise cores.CoreError("the program never blocked")
        core = cores.gcore(truth["pid"], os.path.join(workdir, "core-%s" % host))
    finally:
        os.killpg(process.pid, 9)
        process.wait()
    result = subprocess.run([coreanalyze, core], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    os.unlink(core)
    return result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace")


def main():
    parser = __import__("argparse").ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    results = Results()
    if not os.access(PYTHON, os.X_OK):
        results.report("SKIP", "core owner", ["%s is not installed" % PYTHON])
        return results.finish()
    workdir = tempfile.mkdtemp(prefix="hangpy-owner-")
    try:
        path = os.path.join(workdir, "private_module.py")
        with open(path, "w") as out:
            out.write(MODULE)
        os.chmod(path, 0o600)
        here = socket.gethostname()
        for label, host, quoted in (("no host recorded", None, False), ("this machine's host", here, True),
                                    ("another machine's host", "elsewhere-node", False)):
            out, err = run_case(args.coreanalyze, workdir, host)
            problems = []
            if ('File "%s", line' % path) not in out:
                problems.append("the private module's frame is not shown: %r" % out[-600:])
            if (PRIVATE_LINE in out) != quoted:
                problems.append("the private line is %squoted" % ("not " if quoted else ""))
            if "waiter.acquire()" not in out:
                problems.append("threading.py's line (anyone may read it) is not quoted")
            note = "this core is not known to come from this machine (its host is %s)" % (host or "unknown")
            if (note in err) == quoted:
                problems.append("the note %r is %s: %r" % (note, "given" if quoted else "missing", err))
            results.check("core owner: %s: the private line %squoted" % (label, "" if quoted else "not "), problems)
    except cores.CoreError as error:
        results.report("FAIL", "core owner: %s" % error)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
