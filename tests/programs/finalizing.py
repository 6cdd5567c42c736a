# -*- coding: utf-8 -*-
"""The interpreter hangs while shutting down: an object's __del__, which Py_Finalize runs when it
tears down __main__ (after it has recorded that the interpreter is finalizing), blocks forever
reading a pipe that nothing writes to. (Not a held lock: from 3.15 acquiring a lock during
finalization raises PythonFinalizationError.)

Its ground truth cannot come from groundtruth's reporter thread: daemon threads stop at
finalization, and module globals are gone by the time __del__ runs. So the document is built
while the program runs, from what the blocking frame will be, and __del__ writes it with
builtins it keeps on the instance (os.write, os.rename, os.read need no module globals)
right before it blocks.
"""
import json
import os
import sys
import threading

import groundtruth


class BlockAtShutdown(object):
    def __init__(self, truth_path, document):
        self.pipe = os.pipe()  # both ends stay open: a read waits forever
        self.tmp_path = truth_path + ".tmp"
        self.truth_path = truth_path
        self.document = document
        self.open, self.write, self.close, self.rename = os.open, os.write, os.close, os.rename
        self.read = os.read
        self.flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC

    def __del__(self):
        out = self.open(self.tmp_path, self.flags, 420)
        self.write(out, self.document)
        self.close(out)
        self.rename(self.tmp_path, self.truth_path)
        self.read(self.pipe[0], 1)  # BLOCKS AT SHUTDOWN: nothing writes, never returns


def blocking_line():
    """The line of __del__ that blocks, found in this file's source."""
    with open(__file__, "rb") as source:
        for number, text in enumerate(source, 1):
            if b"# BLOCKS AT SHUTDOWN" in text and b"self.read(" in text:
                return number
    raise RuntimeError("no blocking line in " + __file__)


def main():
    path = groundtruth.output_path()
    code = BlockAtShutdown.__del__.__code__
    thread = threading.current_thread()
    entry = {
        "native_id": groundtruth.current_native_id(),  # the main thread runs __del__ too
        "name": thread.name,
        "frames": [[code.co_filename, blocking_line(), code.co_name]],
        "first_lines": [code.co_firstlineno],
    }
    if hasattr(code, "co_qualname"):
        entry["qualnames"] = [code.co_qualname]
    document = {
        "pid": os.getpid(),
        "version": "%d.%d.%d" % tuple(sys.version_info[:3]),
        "threads": {str(thread.ident): entry},
        "ppid": os.getppid(),
        "uid": os.getuid(),
        "gid": os.getgid(),
        "finalizing": True,
    }
    # Kept in a global of __main__: deleted, and __del__ run, when finalization clears it.
    globals()["keeper"] = BlockAtShutdown(path, json.dumps(document).encode("utf-8"))


if __name__ == "__main__":
    main()
