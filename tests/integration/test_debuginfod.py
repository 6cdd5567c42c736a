#!/usr/bin/python3
"""Integration test: binaries fetched from debuginfod. Takes a core of the deadlock scenario under
pyenv 3.12, serves copies of its python executable and libpython from a local `debuginfod -F DIR`
on loopback, and reads the core with --sysroot pointing to an empty directory (so nothing is found
here): with DEBUGINFOD_URLS the stacks must equal the ground truth and a note must say which files
came from debuginfod; without it the same run must exit with the missing-binaries code.

Exit status: 0 passed, 1 failed, 77 no `debuginfod` server or no pyenv 3.12.
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import run_scenarios  # noqa: E402
import results  # noqa: E402

NAMES = ["pyenv-3.12"]
EXIT_MISSING_BINARIES = 4  # base/exit_codes.h kExitNoInterpreter
SERVED = ("python3", "libpython3")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def scanned_files(metrics):
    """How many files debuginfod's scans have finished (the sum of its scanned_files_total lines)."""
    total = 0
    for line in metrics.splitlines():
        if line.startswith("scanned_files_total"):
            try:
                total += int(float(line.rsplit(" ", 1)[1]))
            except (IndexError, ValueError):
                pass
    return total


def start_server(served_dir, workdir):
    """A debuginfod serving `served_dir` on a free loopback port, ready; (process, url)."""
    expected = len(os.listdir(served_dir))
    port = free_port()
    log = open(os.path.join(workdir, "debuginfod.log"), "wb")
    server = subprocess.Popen(
        ["debuginfod", "-F", served_dir, "-p", str(port), "-d", os.path.join(workdir, "db.sqlite"),
         "-t", "0", "-g", "0"], stdout=log, stderr=subprocess.STDOUT)
    url = "http://127.0.0.1:%d" % port
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            metrics = urllib.request.urlopen(url + "/metrics", timeout=2).read().decode()
            # The first scan of served_dir is done when every file is counted as scanned and no
            # scan work is pending (the pending count is 0 too before the traversal queues any).
            if "thread_work_pending{role=\"scan\"} 0" in metrics and scanned_files(metrics) >= expected:
                return server, url
        except OSError:
            pass
        time.sleep(0.2)
    server.kill()
    raise RuntimeError("debuginfod did not come up on %s" % url)


def served_files(coreanalyze, core):
    out = subprocess.run([coreanalyze, core, "--json"], stdout=subprocess.PIPE)
    modules = json.loads(out.stdout.decode("utf-8"))["process"]["modules"]
    return [path for path in modules
            if os.path.basename(path).startswith(SERVED) and os.path.isfile(path)]


def run(coreanalyze, core, sysroot, env):
    return subprocess.run([coreanalyze, core, "--json", "--sysroot", sysroot], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)


def check(coreanalyze, core, truth, workdir):
    served_dir = os.path.join(workdir, "served")
    empty_root = os.path.join(workdir, "empty-sysroot")
    os.makedirs(served_dir)
    os.makedirs(empty_root)
    files = served_files(coreanalyze, core)
    if len(files) < 2:
        return ["expected the python executable and libpython among the modules, got %r" % files]
    for path in files:
        shutil.copy(path, served_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
    problems = []
    without = run(coreanalyze, core, empty_root, env)
    if without.returncode != EXIT_MISSING_BINARIES:
        problems.append("without DEBUGINFOD_URLS: exit %d, expected %d" %
                        (without.returncode, EXIT_MISSING_BINARIES))
    server, url = start_server(served_dir, workdir)
    try:
        env.update(DEBUGINFOD_URLS=url, DEBUGINFOD_TIMEOUT="20",
                   DEBUGINFOD_CACHE_PATH=os.path.join(workdir, "cache"))
        result = run(coreanalyze, core, empty_root, env)
    finally:
        server.terminate()
        server.wait(timeout=10)
    stderr = result.stderr.decode("utf-8", "replace").strip()
    if result.returncode != 0:
        problems.append("with DEBUGINFOD_URLS: exit %d; stderr: %s" % (result.returncode, stderr))
    try:
        report = json.loads(result.stdout.decode("utf-8"))
    except ValueError:
        return problems + ["no JSON; stderr: %s" % stderr]
    problems += compare.compare_json(truth, report)
    warnings = report.get("warnings") or []
    notes = [w for w in warnings if w.startswith("note:") and "fetched from debuginfod" in w]
    problems += ["warning: %s" % w for w in warnings if w not in notes]
    for path in files:
        if not any(w.startswith("note: %s fetched" % path) for w in notes):
            problems.append("no note says %s came from debuginfod: %r" % (path, warnings))
    return problems + check_stale_cache(coreanalyze, core, empty_root, env, files)


def check_stale_cache(coreanalyze, core, empty_root, env, files):
    """A cached file whose build-id is not the one asked for (the server is gone by now, so the
    cache answers) must be reported and not used."""
    cache = env["DEBUGINFOD_CACHE_PATH"]
    cached = [os.path.join(cache, entry, "executable") for entry in os.listdir(cache)
              if os.path.isfile(os.path.join(cache, entry, "executable"))]
    if len(cached) != len(files):
        return ["expected %d cached executables, found %r" % (len(files), cached)]
    # Each cached file swapped with another: both are ELF files, neither has the right build-id.
    contents = [open(path, "rb").read() for path in cached]
    for path, data in zip(cached, contents[1:] + contents[:1]):
        os.chmod(path, 0o644)
        open(path, "wb").write(data)
    result = run(coreanalyze, core, empty_root, env)
    stderr = result.stderr.decode("utf-8", "replace")
    problems = []
    if result.returncode != EXIT_MISSING_BINARIES:
        problems.append("stale cache: exit %d, expected %d; stderr: %s" %
                        (result.returncode, EXIT_MISSING_BINARIES, stderr.strip()))
    if "not used" not in stderr + result.stdout.decode("utf-8", "replace"):
        problems.append("stale cache: no warning that a fetched file was not used: %s" % stderr)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coreanalyze", required=True)
    args = parser.parse_args()
    if shutil.which("debuginfod") is None:
        print("SKIP: no `debuginfod` server binary (Debian package debuginfod; scripts/install-deps)")
        return results.SKIP

    def check_one(core, truth, interpreter, workdir):
        yield "debuginfod", check(args.coreanalyze, core, truth, workdir)

    return run_scenarios.check_each_interpreter(NAMES, "deadlock", "hangpy-debuginfod-", check_one)


if __name__ == "__main__":
    sys.exit(main())
