# -*- coding: utf-8 -*-
"""A PyTorch process for scripts/bench: `import torch` maps some 300 files in about 1,000 segments,
the shape of the processes users analyse; then the main thread blocks on a held lock."""
import groundtruth


def main():
    path = groundtruth.output_path()
    try:
        import torch  # noqa: F401 (imported for the mappings it brings)
    except ImportError as error:
        groundtruth.skip(path, "cannot import torch: %s" % error)
    groundtruth.start(path, blockers=1)
    lock = groundtruth.held_lock()
    groundtruth.announce_blocking()
    lock.acquire()  # held: never returns


if __name__ == "__main__":
    main()
