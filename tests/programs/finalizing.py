# -*- coding: utf-8 -*-
"""The interpreter hangs while shutting down: an object's __del__, which Py_Finalize runs when it
tears down __main__ (after it has recorded that the interpreter is finalizing), blocks forever
reading a pipe that nothing writes to. (Not a held lock: from 3.15 acquiring a lock during
finalization raises PythonFinalizationError.)

Its ground truth cannot come from groundtruth's reporter thread: daemon threads stop at
finalization, and module globals (json's among them) are gone by the time __del__ runs. So
__del__ observes itself: on the very line that blocks, `self.observe()` runs first and reads
the blocking frame (its file, line, function, first line and qualname), the calling thread and
whether the interpreter says it is finalizing, with functions it keeps on the instance, writes
the document with builtins only (os.write, os.rename need no module globals), and returns; the
read on the same line then blocks. Only the process facts (pid, parent, owner, version) are
taken while the program still runs: they cannot change.
"""
import os
import sys
import threading

import groundtruth


def _json_string(text):
    """`text` as a JSON string with builtins only (no json module at finalization)."""
    if isinstance(text, bytes):  # 2.7's co_filename
        text = text.decode("utf-8", "replace")
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    for code in range(32):
        escaped = escaped.replace(chr(code), "\\u%04x" % code)
    return '"%s"' % escaped


class BlockAtShutdown(object):
    def __init__(self, truth_path, process_facts):
        self.pipe = os.pipe()  # both ends stay open: a read waits forever
        self.tmp_path = truth_path + ".tmp"
        self.truth_path = truth_path
        self.process_facts = process_facts  # JSON members, text
        self.open, self.write, self.close, self.rename = os.open, os.write, os.close, os.rename
        self.read = os.read
        self.flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        self.getframe = sys._getframe
        self.is_finalizing = getattr(sys, "is_finalizing", None)  # 3.5 on
        # The kernel's id of the main thread, which runs __del__ too (groundtruth's functions
        # need their module's globals, gone by then).
        self.native_id_now = groundtruth.current_native_id()
        self.thread = threading.current_thread()  # the main thread runs __del__ too
        self.registry = threading._active  # threading's own table of the threads it names
        self.quote = _json_string

    def observe(self):
        """Writes the ground truth from the frame that calls it (the blocking line)."""
        frame = self.getframe(1)
        code = frame.f_code
        quote = self.quote
        # The thread's name, as long as threading still lists it (2.7's shutdown has removed
        # the main thread from its table by now: no reader can name it then).
        listed = self.registry.get(self.thread.ident) is self.thread
        name = quote(self.thread.name) if listed else "null"
        thread = '{"native_id": %d, "name": %s, "frames": [[%s, %d, %s]], "first_lines": [%d]%s}' % (
            self.native_id_now, name, quote(code.co_filename), frame.f_lineno,
            quote(code.co_name), code.co_firstlineno,
            ', "qualnames": [%s]' % quote(code.co_qualname) if hasattr(code, "co_qualname") else "")
        # 2.7 and 3.4 have no sys.is_finalizing: __del__ runs from Py_Finalize here all the same.
        finalizing = self.is_finalizing() if self.is_finalizing is not None else True
        # What it waits for: the read on this line, of a pipe whose write end nobody uses.
        waits = '{"%d": {"kind": "read"}}' % self.thread.ident
        document = '{%s, "threads": {"%d": %s}, "finalizing": %s, "waits": %s}\n' % (
            self.process_facts, self.thread.ident, thread, "true" if finalizing else "false",
            waits)
        out = self.open(self.tmp_path, self.flags, 420)
        self.write(out, document.encode("utf-8"))
        self.close(out)
        self.rename(self.tmp_path, self.truth_path)
        return True

    def __del__(self):
        # One line: observe() reads this frame at this line, then the read blocks here.
        self.observe() and self.read(self.pipe[0], 1)  # BLOCKS AT SHUTDOWN: nothing writes


def main():
    path = groundtruth.output_path()
    facts = '"pid": %d, "version": "%d.%d.%d", "ppid": %d, "uid": %d, "gid": %d' % (
        (os.getpid(),) + tuple(sys.version_info[:3]) + (os.getppid(), os.getuid(), os.getgid()))
    # Kept in a global of __main__: deleted, and __del__ run, when finalization clears it.
    globals()["keeper"] = BlockAtShutdown(path, facts)


if __name__ == "__main__":
    main()
