# -*- coding: utf-8 -*-
"""Threads blocked in Python code that a built-in called: sorted() calling a key function, and
list.__init__ (through a method-wrapper, from a list subclass) consuming a generator. libpython's
py-bt names the C call between the Python frames ("<built-in method sorted of module object at
remote 0x...>", "<method-wrapper '__init__' of MyList object at 0x...>"): hangpy must too."""
import threading

import groundtruth


def builtin_repr(function):
    owner = getattr(function, "__self__", None)
    if owner is None:
        return "<built-in function %s>" % function.__name__
    return "<built-in method %s of %s object at remote 0x%x>" % (
        function.__name__, type(owner).__name__, id(owner))


class MyList(list):
    def __init__(self, iterable):
        groundtruth.expect_call("<method-wrapper '__init__' of MyList object at 0x%x>" % id(self))
        super(MyList, self).__init__(iterable)


def blocking_items(lock):
    groundtruth.announce_blocking()
    lock.acquire()  # held: never returns
    yield 1


def build_list():
    return MyList(blocking_items(groundtruth.held_lock()))


class Waiter(object):
    def __init__(self, lock):
        self.lock = lock

    # A bound method rather than a closure: libpython's py-locals leaves free variables out.
    def key(self, item):
        groundtruth.announce_blocking()
        self.lock.acquire()  # held: never returns
        return item


def sort_items():
    groundtruth.expect_call(builtin_repr(sorted))
    return sorted([2, 1], key=Waiter(groundtruth.held_lock()).key)


def main():
    groundtruth.start(groundtruth.output_path(), blockers=3)
    builder = threading.Thread(target=build_list, name="builder")
    sorter = threading.Thread(target=sort_items, name="sorter")
    builder.start()
    sorter.start()
    groundtruth.announce_blocking()
    builder.join()


if __name__ == "__main__":
    main()
