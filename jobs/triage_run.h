// coreanalyze triage INPUT... [--pid PID...]: many processes analysed in parallel and merged
// (issue 11): the verdict, the merged tree and each group's stacks on stdout (or --json), and
// the pictures (--html, --svg, --dot) in files.
#pragma once

namespace hangpy::jobs {

// argv[0] is "triage". Returns the exit code: 0 every input analysed; 5 some could not be (the
// triage of the rest is printed); the first input's code when none could; 2 usage; 7 a picture
// could not be written.
int run_triage(int argc, char** argv);

}  // namespace hangpy::jobs
