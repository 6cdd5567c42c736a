"""A fork while another thread imports a module (issue 34): thread "loader" imports
fork_import_slow, whose body never ends, so importlib's lock of that module stays held; the main
thread forks; the child imports the same module and waits for that lock for ever (the line marked
CHILD-IMPORTS); the parent waits for the child.

    python fork_import_lock.py TRUTH_JSON

Before either blocks, the parent writes TRUTH_JSON, the cause as the interpreter knows it:
{"parent_pid", "child_pid", "module", "holder": "loader", "holder_ident": "0x..." (the thread's
ident, which importlib's lock records as its owner), "child_line"}; the child writes
TRUTH_JSON.child once it is about to import. Python 3."""
import os
import sys
import threading

import groundtruth  # tests/programs/groundtruth.py: marker lines, atomic JSON

MODULE = "fork_import_slow"
importing = threading.Event()


def load():
    __import__(MODULE)


def import_in_child(truth_path):
    with open(truth_path + ".child", "w") as out:
        out.write(str(os.getpid()))
    import fork_import_slow  # CHILD-IMPORTS


def main():
    truth_path = sys.argv[1]
    holder = threading.Thread(target=load, name="loader")
    holder.daemon = True
    holder.start()
    importing.wait()
    child = os.fork()
    if child == 0:
        import_in_child(truth_path)
        os._exit(0)
    truth = {"parent_pid": os.getpid(), "child_pid": child, "module": MODULE, "holder": holder.name,
             "holder_ident": "0x%x" % holder.ident,
             "child_line": groundtruth.marker_line(__file__, "CHILD-IMPORTS")}
    groundtruth.write_json(truth_path, truth)
    os.waitpid(child, 0)


if __name__ == "__main__":
    main()
