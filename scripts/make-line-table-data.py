#!/usr/bin/env python
# Writes the line tables of a sample module's code objects, with the line of every instruction
# as the running interpreter itself computes it (co_lines() from 3.10 on, dis.findlinestarts
# before), so the unit tests check hangpy's decoders against CPython's own answer. From 3.11 on
# each code also gets "positions": [byte offset, line, end line, column, end column] for every
# 2-byte code unit, as co_positions() yields them (PEP 657).
# Usage: PYTHON scripts/make-line-table-data.py OUT.json   (runs on Python 2.7 and 3.6+)
import binascii
import dis
import json
import sys
import types

SAMPLE = '''
import os

def simple(a, b):
    c = a + b
    return c

def branches(x):
    if x > 1:
        x -= 1
    elif x < -5:
        x += 3
    else:
        x = 0
    for i in range(3):
        while x:
            x -= 1
    return x

def long_jump(values):
    total = 0
''' + "".join("    total += values[%d]\n" % i for i in range(150)) + '''
    return total

def far_lines():
    a = 1



''' + "\n" * 300 + '''
    b = 2
    return a + b

class Widget(object):
    def method(self, value):
        try:
            return value.attribute
        except AttributeError:
            return None
        finally:
            self.done = True

def generator():
    for item in range(10):
        yield item

square = lambda n: (n *
                    n)

def wide_and_spanning(values):
    total = ''' + " + ".join('values.get("key_%d", %d)' % (i, i) for i in range(14)) + '''
    spanning = max(total,
                   len(values),
                   values.get("last", 0))
    return total + spanning
'''


def code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            for inner in code_objects(const):
                yield inner


def table_of(code):
    if sys.version_info >= (3, 10):
        return code.co_linetable
    return code.co_lnotab


def kind():
    if sys.version_info >= (3, 11):
        return "location"
    if sys.version_info >= (3, 10):
        return "linetable310"
    return "lnotab"


def instruction_lines(code):
    """(byte offset, line or None) for every 2-byte unit (3.6+) or instruction start (2.7)."""
    if sys.version_info >= (3, 10):
        result = []
        for start, end, line in code.co_lines():
            for offset in range(start, end, 2):
                result.append([offset, line])
        return result
    starts = list(dis.findlinestarts(code))
    result = []
    size = len(code.co_code)
    step = 1 if sys.version_info < (3, 6) else 2
    for offset in range(0, size, step):
        line = None
        for start, start_line in starts:
            if start <= offset:
                line = start_line
        result.append([offset, line])
    return result


def instruction_positions(code):
    """[byte offset, line, end line, column, end column] per code unit (3.11+), else None."""
    if not hasattr(code, "co_positions"):
        return None
    return [[2 * index] + list(position) for index, position in enumerate(code.co_positions())]


def main():
    module = compile(SAMPLE, "sample.py", "exec")
    codes = []
    for code in code_objects(module):
        entry = {
            "name": code.co_name,
            "first_line": code.co_firstlineno,
            "table": binascii.hexlify(table_of(code)).decode("ascii"),
            "lines": instruction_lines(code),
        }
        positions = instruction_positions(code)
        if positions is not None:
            entry["positions"] = positions
        codes.append(entry)
    out = {
        "version": "%d.%d.%d" % sys.version_info[:3],
        "kind": kind(),
        "lnotab_signed": sys.version_info >= (3, 6),
        "codes": codes,
    }
    with open(sys.argv[1], "w") as stream:
        json.dump(out, stream, separators=(",", ":"))


main()
