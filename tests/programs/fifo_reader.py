"""A thread blocked reading a FIFO nobody writes, for the file behind a read (issue 21): a core
holds no file table, but ABRT's `open_fds` item does; tests/integration/test_inputs.py makes one
as abrt-hook-ccpp does and checks that the wait names the FIFO.

    python3 fifo_reader.py TRUTH_JSON

Writes TRUTH_JSON ({"pid", "fd", "path", "line"}) just before the read (the line marked READS)."""
import os
import sys
import tempfile

import groundtruth  # tests/programs/groundtruth.py: marker lines, atomic JSON


def main():
    directory = tempfile.mkdtemp(prefix="hangpy-fifo-")
    path = os.path.join(directory, "requests.fifo")
    os.mkfifo(path)
    fd = os.open(path, os.O_RDWR)  # read and write: the open does not wait for a writer
    groundtruth.write_json(sys.argv[1], {"pid": os.getpid(), "fd": fd, "path": path,
                                         "line": groundtruth.marker_line(__file__, "READS")})
    os.read(fd, 1)  # READS


if __name__ == "__main__":
    main()
