// Who holds a pipe's other end, across the processes of a triage: a thread blocked reading or
// writing a pipe can be woken only by the processes holding its other end. A live document says
// (its /proc was read); a snapshot core's says only which pipe (its note lists the process's pipe
// ends), and the triage matches the two ends by the pipe's inode among the processes it has.
#pragma once

#include <vector>

#include "triage/process_record.h"

namespace hangpy::triage {

// Fills ThreadRecord::other_end_pids where a document left it empty and the pipe's other end is
// held by processes of the same host among `processes`.
void match_pipe_ends(std::vector<ProcessRecord>& processes);

}  // namespace hangpy::triage
