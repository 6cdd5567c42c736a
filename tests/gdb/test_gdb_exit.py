#!/usr/bin/python3
"""gdb test: gdb exits cleanly while hangpy still caches an analysis. The cache holds Python
objects; gdb finalizes Python before the process's static destructors run, so a cache released
then aborted gdb ("Fatal Python error: PyThreadState_Get", exit 134). Normally an event (the core
going away) empties the cache first; this test disconnects those events after `py-bt` on the
example core, as an import that failed halfway leaves them unconnected.

  test_gdb_exit.py --hangpy-init build/gdbplugin/hangpy.gdb

Exit status: 0 passed, 1 gdb did not exit cleanly, 77 gdb, zstd or the module is missing.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)
import gdb_session  # noqa: E402
import run_scenarios  # noqa: E402
from results import SKIP, Results  # noqa: E402

EXAMPLE = os.path.join(REPO, "examples", "deadlock.core.zst")
DISCONNECT = """python
import gdb, hangpy
for name in dir(gdb.events):
    try:
        getattr(gdb.events, name).disconnect(hangpy._invalidate)
    except Exception:
        pass
end
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hangpy-init", required=True)
    args = parser.parse_args()
    problem = gdb_session.environment_problem(args.hangpy_init)
    if problem or shutil.which("zstd") is None:
        print("SKIP: %s" % (problem or "zstd is not installed (scripts/install-deps)"))
        return SKIP
    results = Results()
    with tempfile.TemporaryDirectory() as directory:
        core = run_scenarios.decompress(EXAMPLE, directory)
        script = os.path.join(directory, "disconnect.gdb")
        with open(script, "w") as commands:
            commands.write(DISCONNECT)
        argv = gdb_session.GdbOptions(hangpy_init=args.hangpy_init).argv() + [
            "-ex", "py-bt", "-x", script, "-c", core]
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, timeout=gdb_session.GDB_TIMEOUT)
        text = result.stdout.decode("utf-8", "replace")
        problems = []
        if "_wait_for_tstate_lock" not in text:
            problems.append("py-bt printed no frames, so nothing was cached:\n" + text[-2000:])
        if result.returncode != 0 or "Fatal" in text:
            problems.append("gdb exited %d:\n%s" % (result.returncode, text[-2000:]))
        results.check("exit with a cached analysis", problems)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
