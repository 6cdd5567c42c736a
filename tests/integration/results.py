"""How every test driver reports its cases: one line per case (PASS, FAIL or SKIP and a label,
its details indented below), then one closing line "N passed, N failed, N skipped", and the exit
status ctest reads.
"""
import sys

# ctest's SKIP_RETURN_CODE for every driver (tests/integration/CMakeLists.txt, tests/gdb/...).
SKIP = 77
STATUSES = ("PASS", "FAIL", "SKIP")


class Results(object):
    def __init__(self):
        self.counts = dict((status, 0) for status in STATUSES)

    def report(self, status, label, details=()):
        """Print one case's outcome at once (a driver that hangs later has shown its progress)."""
        if status not in self.counts:
            raise ValueError("status %r is not one of %s" % (status, STATUSES))
        self.counts[status] += 1
        print("%-4s %s" % (status, label))
        for detail in details:
            print("     " + str(detail).replace("\n", "\n     "))
        sys.stdout.flush()

    def check(self, label, problems):
        """Report a case that passed when it found no problems."""
        self.report("FAIL" if problems else "PASS", label, problems)

    def finish(self):
        """Print the closing line; return the exit status: 1 when a case failed, SKIP when none
        passed (the driver tested nothing here: every case skipped, each with its SKIP line, or
        there was none, which says so), else 0. No driver reports Passed for a run that checked
        nothing."""
        if not any(self.counts.values()):
            print("SKIP: no case ran here")
            self.counts["SKIP"] += 1
        print("%d passed, %d failed, %d skipped" % (self.counts["PASS"], self.counts["FAIL"],
                                                    self.counts["SKIP"]))
        if self.counts["FAIL"]:
            return 1
        if not self.counts["PASS"]:
            return SKIP
        return 0
