"""Reads of pipes that can never end, for who holds a pipe's other end (issue 21): two children of
one parent each read a pipe. Child "keeps-own-end" never closed the write end it inherited, so no
end of file can come; child "waits-for-parent" closed it, and the parent holds the write end and
never writes. The parent waits for both.

    python pipe_ends.py TRUTH_JSON

The parent writes TRUTH_JSON ({"parent_pid", "own_end_pid", "own_end_read_fd",
"own_end_write_fd", "parent_end_pid", "parent_end_read_fd", "parent_write_fd", "line"}) once
both children are about to read (each writes TRUTH_JSON.PID first). Python 2.7 and 3."""
import os
import sys

import groundtruth  # tests/programs/groundtruth.py: marker lines, atomic JSON


def child(truth_path, read_fd, close_fds):
    for fd in close_fds:
        os.close(fd)
    with open("%s.%d" % (truth_path, os.getpid()), "w") as out:
        out.write("reading")
    os.read(read_fd, 1)  # READS
    os._exit(0)


def main():
    truth_path = sys.argv[1]
    own_read, own_write = os.pipe()
    own_end_pid = os.fork()
    if own_end_pid == 0:
        child(truth_path, own_read, [])  # keeps own_write open
    os.close(own_read)
    os.close(own_write)
    parent_read, parent_write = os.pipe()
    parent_end_pid = os.fork()
    if parent_end_pid == 0:
        child(truth_path, parent_read, [parent_write])
    os.close(parent_read)
    for pid in (own_end_pid, parent_end_pid):
        while not os.path.exists("%s.%d" % (truth_path, pid)):
            pass
    groundtruth.write_json(truth_path, {
        "parent_pid": os.getpid(), "own_end_pid": own_end_pid, "own_end_read_fd": own_read,
        "own_end_write_fd": own_write, "parent_end_pid": parent_end_pid, "parent_end_read_fd": parent_read,
        "parent_write_fd": parent_write, "line": groundtruth.marker_line(__file__, "READS")})
    for pid in (own_end_pid, parent_end_pid):
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
