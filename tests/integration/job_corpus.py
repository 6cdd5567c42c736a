"""The check of one stored job of tests/corpus/jobs (scripts/make-job-corpus): its snapshot cores
triaged together give, line by line, verdict lines that hold every string verdict.json lists."""
import glob
import json
import os
import subprocess


def check(coreanalyze, directory):
    with open(os.path.join(directory, "verdict.json")) as stream:
        expected = json.load(stream)["lines"]
    inputs = sorted(glob.glob(os.path.join(directory, "*.core.zst")))
    result = subprocess.run([coreanalyze, "triage", "--json"] + inputs, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=120)
    if result.returncode != 0:
        return ["triage: exit %d: %s" % (result.returncode, result.stderr.decode("utf-8", "replace")[-400:])]
    lines = json.loads(result.stdout)["verdict"].splitlines()
    problems = []
    for number, wanted in enumerate(expected):
        line = lines[number] if number < len(lines) else ""
        for part in wanted:
            if part not in line:
                problems.append("verdict line %d lacks %r: %r" % (number + 1, part, line))
    return problems
