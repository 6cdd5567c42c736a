# -*- coding: utf-8 -*-
"""Threads blocked in Python code that a built-in called: sorted() calling a key function, and
list.__init__ (through a method-wrapper, from a list subclass) consuming a generator. libpython's
py-bt names the C call between the Python frames ("<built-in method sorted of module object at
remote 0x...>", "<method-wrapper '__init__' of MyList object at 0x...>"): hangpy must too. A
third thread blocks in a lock's __enter__ (`with held:`) after calls that returned (another
lock's __enter__ and __exit__, time.sleep), whose objects a stack scan may still meet: only the
__enter__ in progress may be named."""
import sys
import threading
import time

import groundtruth


def type_name(owner):
    """tp_name, as libpython prints it: "_thread.lock", "list"."""
    module = type(owner).__module__
    if module in ("builtins", "__builtin__"):
        return type(owner).__name__
    return "%s.%s" % (module, type(owner).__name__)


def builtin_repr(function):
    owner = getattr(function, "__self__", None)
    if owner is None:
        return "<built-in function %s>" % function.__name__
    return "<built-in method %s of %s object at remote 0x%x>" % (
        function.__name__, type_name(owner), id(owner))


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


def enter_held():
    first = threading.Lock()
    with first:  # its __enter__ and __exit__ run and return
        pass
    time.sleep(0.001)  # returns
    held = groundtruth.held_lock()
    if sys.version_info < (3, 14):
        # From 3.14 `with` calls the method descriptor itself (LOAD_SPECIAL): no bound built-in
        # object is made, and libpython has no call line to print.
        groundtruth.expect_call(builtin_repr(held.__enter__))
    for returned in (first.__enter__, first.__exit__, held.__exit__, time.sleep):
        groundtruth.returned_call(builtin_repr(returned))
    groundtruth.announce_blocking()
    with held:  # held: __enter__ never returns
        pass


def main():
    groundtruth.start(groundtruth.output_path(), blockers=4)
    builder = threading.Thread(target=build_list, name="builder")
    sorter = threading.Thread(target=sort_items, name="sorter")
    enterer = threading.Thread(target=enter_held, name="enterer")
    builder.start()
    sorter.start()
    enterer.start()
    groundtruth.announce_blocking()
    builder.join()


if __name__ == "__main__":
    main()
