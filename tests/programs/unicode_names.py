# -*- coding: utf-8 -*-
"""Blocks inside función_ñ() of the module file tëst_ünïcödé.py."""
import importlib
import sys

import groundtruth


def main():
    path = groundtruth.output_path()
    if sys.version_info[0] < 3:
        groundtruth.skip(path, "Python 2 identifiers and module names are ASCII only")
    groundtruth.start(path, blockers=1)
    # import_module, not an import statement: this file must still compile on Python 2.7.
    module = importlib.import_module(u"t\u00ebst_\u00fcn\u00efc\u00f6d\u00e9")
    getattr(module, u"funci\u00f3n_\u00f1")(groundtruth.held_lock())


if __name__ == "__main__":
    main()
