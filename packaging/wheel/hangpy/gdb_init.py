"""hangpy-gdb-init: prints the gdb command that loads hangpy's gdb module from where pip
installed it, one line, for a gdbinit or gdb's -ex:

    hangpy-gdb-init >> ~/.gdbinit                     then `load hangpy` in any gdb session
    gdb -ex "$(hangpy-gdb-init)" -ex 'load hangpy' -p PID

The line sources the init file the tarball has (share/hangpy/hangpy.py), which finds the
module (hangpy.abi3.so, CPython's Stable ABI: the gdb of any distribution, Python 3.6 on) beside
itself."""
import argparse
import os
import sys

from . import __version__, gdb_init_file


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="hangpy-gdb-init", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version",
                        version="hangpy-gdb-init (hangpy) %s" % __version__)
    parser.parse_args(argv)
    init = gdb_init_file()
    if not os.path.isfile(init):
        sys.stderr.write("hangpy-gdb-init: %s is missing; reinstall hangpy\n" % init)
        return 1
    print("source " + init)
    return 0


if __name__ == "__main__":
    sys.exit(main())
