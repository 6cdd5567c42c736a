"""A program that writes its ground truth (a JSON file) before it blocks, for the drivers that
read real hung processes: started in a session of its own, waited for until its truth (and any
other file it promises) exists, and killed as a whole, whatever happens."""
import json
import os
import signal
import subprocess
import time


class NeverBlocked(Exception):
    """The program ended or timed out before writing its ground truth; the message holds the end
    of its output."""


class BlockedProgram(object):
    def __init__(self, argv, cwd, truth_path, also=(), env=None, timeout=30, settle=0.5):
        self.argv, self.cwd, self.truth_path = argv, cwd, truth_path
        self.waited_for = [truth_path] + list(also)
        self.env, self.timeout, self.settle = env, timeout, settle
        self.process = None
        self.truth = None

    def __enter__(self):
        self.process = subprocess.Popen(self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + self.timeout
        while time.time() < deadline and self.process.poll() is None and \
                not all(os.path.exists(path) for path in self.waited_for):
            time.sleep(0.02)
        if not all(os.path.exists(path) for path in self.waited_for):
            self.kill()
            output = self.process.communicate()[0].decode("utf-8", "replace")[-600:]
            raise NeverBlocked("the program never blocked: %s" % output)
        with open(self.truth_path) as stream:
            self.truth = json.load(stream)
        time.sleep(self.settle)  # from the program's note to the call it announces
        return self

    def kill(self):
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass

    def __exit__(self, *exc):
        self.kill()
        self.process.wait()
        return False
