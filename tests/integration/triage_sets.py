#!/usr/bin/python3
"""Synthetic jobs for `coreanalyze triage` at scale, made from REAL coreanalyze --json documents
of real processes: a document of a rank that is where most are and one of the odd rank are
copied into COUNT documents, one per rank, each with its own rank labels, PID and host (8 ranks a
node), and the odd document at rank ODD. Nothing in the stacks is made up.

  triage_sets.py MAJORITY.json ODD.json COUNT ODD OUTPUT_DIR
"""
import copy
import json
import os
import sys

RANKS_PER_NODE = 8


def labelled(document, rank, count):
    """A copy of `document` as rank `rank` of `count` (the fields coreanalyze --json gives a
    process's labels: process.labels.rank/local_rank/world_size, process.host)."""
    result = copy.deepcopy(document)
    process = result.setdefault("process", {})
    process["pid"] = 100000 + rank
    process["host"] = "node%03d" % (rank // RANKS_PER_NODE)
    labels = process.get("labels") or {}
    labels.update({"rank": rank, "local_rank": rank % RANKS_PER_NODE, "world_size": count})
    process["labels"] = labels
    return result


def write_set(majority, odd, count, odd_rank, directory):
    """Writes rank%05d.json for each rank into `directory`; returns the paths."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for rank in range(count):
        path = os.path.join(directory, "rank%05d.json" % rank)
        with open(path, "w") as out:
            json.dump(labelled(odd if rank == odd_rank else majority, rank, count), out)
        paths.append(path)
    return paths


def main():
    if len(sys.argv) != 6:
        sys.stderr.write(__doc__)
        return 2
    with open(sys.argv[1]) as majority_file, open(sys.argv[2]) as odd_file:
        majority, odd = json.load(majority_file), json.load(odd_file)
    write_set(majority, odd, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    return 0


if __name__ == "__main__":
    sys.exit(main())
