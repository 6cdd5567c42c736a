"""`python -m hangpy ARGS...`: runs the coreanalyze installed with this package with ARGS (exec:
its output and exit status are coreanalyze's own)."""
import os
import sys

from . import coreanalyze_path


def main():
    path = coreanalyze_path()
    if path is None:
        sys.stderr.write("python -m hangpy: no coreanalyze where pip installed this package's "
                         "programs; reinstall hangpy (pip install --force-reinstall hangpy)\n")
        return 127
    os.execv(path, [path] + sys.argv[1:])
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
