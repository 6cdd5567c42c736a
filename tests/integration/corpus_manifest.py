"""The corpus manifest (tests/corpus/manifest.json): for every interpreter × scenario, whether its
snapshot is in the corpus, and if not why not.

    {"<interpreter>": {"<scenario>": "present"
                                   | {"skip": "why the scenario does not apply there"}
                                   | {"expected_failure": "why the stored snapshot fails"}
                                   | {"legacy_truth": "why it cannot be captured again here"}}}

"present": the snapshot and its ground truth are stored and must pass. "skip": the program said
it does not apply (groundtruth.skip) and nothing is stored. "expected_failure": a capture that
failed its check is stored all the same (scripts/make-corpus never keeps an older file in its
place); the corpus test runs it and expects it to fail, and fails when it passes (the mark must
then go). "legacy_truth": stored and checked like "present", but its ground truth was written by
an older program and lacks facts today's programs record (the waits, the process facts: see
compare.missing_truth); the reason says why it was not captured again. A "present" entry whose
truth lacks any of them fails. A stored file the manifest does not list, a listed one that is missing, an interpreter
directory without a line, or a scenario without an entry fails the corpus test.
"""
import json
import os

NAME = "manifest.json"
PRESENT = "present"


def path_of(corpus):
    return os.path.join(corpus, NAME)


def load(corpus):
    """The manifest of `corpus`, or None when it has none."""
    try:
        with open(path_of(corpus)) as stream:
            return json.load(stream)
    except (IOError, OSError):
        return None


def save(corpus, manifest):
    tmp = path_of(corpus) + ".tmp"
    with open(tmp, "w") as out:
        json.dump(manifest, out, indent=1, sort_keys=True)
        out.write("\n")
    os.rename(tmp, path_of(corpus))


def mark(corpus, interpreter, scenario, state):
    """Record `state` ("present", {"skip": ...} or {"expected_failure": ...}) for one entry."""
    manifest = load(corpus) or {}
    manifest.setdefault(interpreter, {})[scenario] = state
    save(corpus, manifest)


def kind(state):
    """"present", "skip", "expected_failure" or "legacy_truth"; ValueError for anything else."""
    if state == PRESENT:
        return PRESENT
    if isinstance(state, dict) and len(state) == 1:
        key, reason = next(iter(state.items()))
        if key in ("skip", "expected_failure", "legacy_truth") and isinstance(reason, str) and reason.strip():
            return key
    raise ValueError("%r is not \"present\", {\"skip\": reason} or {\"expected_failure\": reason}"
                     % (state,))


def stored(corpus, interpreter, scenario):
    base = os.path.join(corpus, interpreter, scenario)
    return [os.path.exists(base + suffix) for suffix in (".core.zst", ".truth.json")]


def problems(corpus, scenarios, directories):
    """What is wrong between the manifest and the files: `scenarios` every scenario a corpus
    interpreter must account for, `directories` the interpreter directories found."""
    manifest = load(corpus)
    if manifest is None:
        return ["no %s in %s" % (NAME, corpus)]
    found = []
    for directory in sorted(set(directories) - set(manifest)):
        found.append("%s/ is not in the manifest" % directory)
    for interpreter in sorted(manifest):
        if interpreter not in directories:
            found.append("%s: in the manifest, but the corpus has no such directory" % interpreter)
            continue
        entries = manifest[interpreter]
        listed = set(entries)
        on_disk = set(name[:-len(".core.zst")] for name in os.listdir(os.path.join(corpus, interpreter))
                      if name.endswith(".core.zst"))
        for scenario in sorted(set(scenarios) - listed):
            found.append("%s/%s: no manifest entry (present, skip, expected_failure or legacy_truth)"
                         % (interpreter, scenario))
        for scenario in sorted(on_disk - listed):
            found.append("%s/%s: stored but not in the manifest" % (interpreter, scenario))
        for scenario in sorted(listed):
            try:
                state = kind(entries[scenario])
            except ValueError as error:
                found.append("%s/%s: %s" % (interpreter, scenario, error))
                continue
            core, truth = stored(corpus, interpreter, scenario)
            if state == "skip" and (core or truth):
                found.append("%s/%s: marked skip (%s) but stored"
                             % (interpreter, scenario, entries[scenario]["skip"]))
            elif state != "skip" and not (core and truth):
                found.append("%s/%s: marked %s but its %s missing" % (
                    interpreter, scenario, state,
                    "snapshot is" if not core else "ground truth is"))
    return found


def marked(corpus, key):
    """{"<interpreter>/<scenario>": reason} for the entries marked `key` (expected_failure,
    legacy_truth)."""
    found = {}
    for interpreter, entries in (load(corpus) or {}).items():
        for scenario, state in entries.items():
            if isinstance(state, dict) and key in state:
                found["%s/%s" % (interpreter, scenario)] = state[key]
    return found
