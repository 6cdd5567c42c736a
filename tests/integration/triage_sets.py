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


# Stand-ins written where a copy's own values go: each document is serialised once and the copies
# are made by replacing them (100,000 deep copies and dumps of a 30 KB document take minutes).
_MARKS = {"pid": 1999999001, "rank": 1999999002, "local_rank": 1999999003}
_HOST_MARK = "@@hangpy-host@@"


def _template(document, count):
    result = labelled(document, 0, count)
    result["process"]["pid"] = _MARKS["pid"]
    result["process"]["host"] = _HOST_MARK
    result["process"]["labels"].update(rank=_MARKS["rank"], local_rank=_MARKS["local_rank"])
    text = json.dumps(result)
    for mark in list(_MARKS.values()) + [_HOST_MARK]:
        if text.count(str(mark)) != 1:
            raise ValueError("a stand-in value is in the document already: %s" % mark)
    return text


def write_set(majority, odd, count, odd_rank, directory):
    """Writes rank%05d.json for each rank into `directory` (the same documents labelled() would
    give); returns the paths."""
    os.makedirs(directory, exist_ok=True)
    templates = {False: _template(majority, count), True: _template(odd, count)}
    paths = []
    for rank in range(count):
        text = (templates[rank == odd_rank]
                .replace(str(_MARKS["pid"]), str(100000 + rank))
                .replace(str(_MARKS["rank"]), str(rank))
                .replace(str(_MARKS["local_rank"]), str(rank % RANKS_PER_NODE))
                .replace(_HOST_MARK, "node%03d" % (rank // RANKS_PER_NODE)))
        path = os.path.join(directory, "rank%05d.json" % rank)
        with open(path, "w") as out:
            out.write(text)
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
