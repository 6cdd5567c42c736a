// Who holds the other end of a pipe or a connection, across the processes of a triage: a thread
// blocked reading or writing a pipe, or receiving on a TCP connection, can be woken only by the
// process holding its other end. A live document says for a pipe (its /proc was read); otherwise
// each document lists the pipe ends and connected sockets its process holds (a snapshot core's
// notes, or /proc), and the triage matches the two ends among the processes it has: a pipe by
// its inode, a connection by its two addresses swapped, on the same host. Where a process lists
// no pipe ends (an ordinary core), a child writing its fd 1 or 2 is matched with a parent waiting
// for it in subprocess's wait whose Popen reads that descriptor (blocked_on.child_pipe_fds).
#pragma once

#include <vector>

#include "triage/process_record.h"

namespace hangpy::triage {

// Fills ThreadRecord::other_end_pids where a document left it empty and the other end is held by
// processes of the same host among `processes`.
void match_pipe_ends(std::vector<ProcessRecord>& processes);

}  // namespace hangpy::triage
