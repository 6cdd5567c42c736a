"""hangpy as pip installs it (scripts/package's wheel): the coreanalyze program and the gdb module.

- `coreanalyze` is installed beside this environment's python (its bin/): a program of its own,
  linked statically (it needs glibc 2.17 and nothing of Python).
- `python -m hangpy ARGS...` runs that coreanalyze with ARGS.
- `hangpy-gdb-init` prints the gdb command that loads the gdb module from this package:
  `gdb -ex "$(hangpy-gdb-init)" -ex 'load hangpy' -p PID`, or `hangpy-gdb-init >> ~/.gdbinit`.
"""
import csv
import glob
import os
import sysconfig

from ._version import __version__  # noqa: F401 (written by the build: hatchling's version hook)

_HERE = os.path.dirname(os.path.abspath(__file__))


def gdb_init_file():
    """The gdb init of the tarball (a Python file for gdb's `source`): it puts the module
    beside it (gdb/lib/hangpy/python/hangpy.abi3.so) on gdb's Python path and defines `load
    hangpy`."""
    return os.path.join(_HERE, "gdb", "share", "hangpy", "hangpy.py")


def _recorded_coreanalyze():
    """coreanalyze where pip installed it with this package: RECORD, in the .dist-info beside
    this package, names each file pip wrote (bin/ of a venv, ~/.local/bin for --user...)."""
    site = os.path.dirname(_HERE)
    records = (glob.glob(os.path.join(site, "hangpy-%s.dist-info" % __version__, "RECORD"))
               or glob.glob(os.path.join(site, "hangpy-*.dist-info", "RECORD")))
    for record in records:
        with open(record, newline="") as stream:
            for row in csv.reader(stream):
                # bin/coreanalyze; not share/bash-completion/completions/coreanalyze.
                if row and row[0].replace(os.sep, "/").endswith("bin/coreanalyze"):
                    path = os.path.normpath(os.path.join(site, row[0]))
                    if os.access(path, os.X_OK):
                        return path
    return None


def coreanalyze_path():
    """The coreanalyze of this package, or None when it is not where pip put it."""
    path = _recorded_coreanalyze()
    if path is None:
        scripts = os.path.join(sysconfig.get_path("scripts"), "coreanalyze")
        if os.access(scripts, os.X_OK):
            path = scripts
    return path
