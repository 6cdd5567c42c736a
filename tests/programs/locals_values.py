# -*- coding: utf-8 -*-
"""A thread that blocks with locals of every kind hangpy shows (coreanalyze --locals, py-locals),
each recorded with the repr it must have: Python's own repr where libpython.py's shape is the
same, else libpython's shape ("<Point(x=1, ...) at remote 0x...>"), built here from id()."""
import sys
import threading

import groundtruth

PY2 = sys.version_info[0] == 2


class Point(object):
    def __init__(self, x, y):
        self.x = x
        self.y = y


def type_name(value):
    module = type(value).__module__
    name = type(value).__name__
    return name if module in ("builtins", "__builtin__") else module + "." + name


def builtin_repr(function):
    owner = getattr(function, "__self__", None)
    if owner is None:
        return "<built-in function %s>" % function.__name__
    return "<built-in method %s of %s object at remote 0x%x>" % (
        function.__name__, type(owner).__name__, id(owner))


def hold_values(lock):
    count = 42
    negative = -12345678901234567890
    ratio = 2.5
    flag = True
    nothing = None
    text = u"plain text"
    data = b"\x00ab"
    pair = (1, "two")
    items = [1, 2, 3]
    table = {"key": 7}
    point = Point(1, "y")
    function = hold_values
    measure = len
    expected = {
        "lock": "<%s at remote 0x%x>" % (type_name(lock), id(lock)),
        "count": "42",
        "negative": "-12345678901234567890",
        "ratio": "2.5",
        "flag": "True",
        "nothing": "None",
        # Python 2's `unicode` shows with its u prefix (read as UCS-2 or UCS-4 per build).
        "text": "u'plain text'" if PY2 else "'plain text'",
        "data": repr(data),
        "pair": repr(pair),
        "items": "[1, 2, 3]",
        "table": repr(table),
        # In the instance dict's order: insertion order from 3.6, table order in 2.7.
        "point": "<Point(%s) at remote 0x%x>" % (
            ", ".join("%s=%r" % item for item in vars(point).items()), id(point)),
        "function": "<function at remote 0x%x>" % id(function),
        "measure": builtin_repr(measure),
    }
    groundtruth.expect_locals("hold_values", expected)
    groundtruth.announce_blocking()
    lock.acquire()  # held: never returns


def main():
    groundtruth.start(groundtruth.output_path(), blockers=2)
    worker = threading.Thread(target=hold_values, args=(groundtruth.held_lock(),), name="holder")
    worker.start()
    groundtruth.announce_blocking()
    worker.join()


if __name__ == "__main__":
    main()
