// One analysed process as the triage sees it: its labels and its threads' stacks, read from a
// coreanalyze --json document (docs/json-schema.md). Only what the merge compares is kept.
// asyncio's pending tasks (the document's "asyncio" part) come in as more stacks: a hung asyncio
// service's work is in tasks no thread runs, and identical stuck tasks of a fleet must fold.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "triage/frame.h"
#include "triage/frame_locals.h"
#include "triage/labels.h"
#include "triage/sharing_pool.h"
#include "triage/string_limit.h"

namespace hangpy::triage {

struct ThreadRecord {
  std::optional<int64_t> native_thread_id;
  std::optional<std::string> name;
  bool main_thread = false;
  FrameList python_frames;  // outermost first; shared with the records in the same frames
  // Each Python frame's arguments and locals as (name, repr), parallel to python_frames; empty
  // when the document has none (an analysis without --locals). Shared with the other records
  // whose frame holds the same values where the parse had a SharingPool.
  std::vector<FrameLocals> python_locals;
  // The native stack with the Python frames spliced in (--native), outermost first; absent when
  // the document has none for this thread.
  std::optional<std::vector<Frame>> native_frames;
  // The thread's "error": why its frames end early ("frame chain too long"), where they do.
  std::optional<std::string> error;
  std::optional<std::string> blocked_kind;         // blocked_on.kind: "lock", "event", ...
  std::optional<std::string> blocked_description;  // blocked_on.description
  bool idle = false;  // state.idle: waits for work to come (no hang is there)
  std::optional<uint64_t> blocked_object;  // blocked_on.object: the lock, Event... waited for
  bool holder_gone = false;                // blocked_on.holder_gone: no thread here holds it
  std::optional<int64_t> child_pid;        // blocked_on.child_pid: the child process waited for
  std::optional<int64_t> owner_ident;      // blocked_on.owner_thread_id: the holder's ident
  std::optional<int64_t> thread_id;        // the Python thread's ident (threading.get_ident())
  std::vector<int64_t> other_end_pids;     // blocked_on.other_end_pids: a pipe's other end
  std::optional<int64_t> blocked_fd;       // blocked_on.fd: the descriptor read or written
  std::vector<int64_t> child_pipe_fds;     // blocked_on.child_pipe_fds: the child's piped fds
  std::vector<uint64_t> held_locks;        // state.held_locks
  // A pending asyncio task, not a thread: `name` is the task's, python_frames its coroutine
  // stack (outermost first), its whole stack in a native merge too (a suspended coroutine has no
  // native frames; native_frames stays empty); blocked_kind and blocked_description say what it
  // awaits (awaits.kind, awaits.detail).
  bool asyncio_task = false;
  // The time axis (the document's look.threads): CPU time used and bytes read and written by then.
  std::optional<double> cpu_seconds;
  std::optional<uint64_t> io_bytes;
  std::optional<double> run_delay_seconds;  // time spent runnable, waiting for a CPU (schedstat)
  std::optional<char> run_state;            // the thread's state letter (R runnable, S asleep...)
};

// process.pipe_ends: a pipe end the process holds (pipe_partners.h matches them).
struct PipeEndRecord {
  int64_t fd = 0;
  uint64_t inode = 0;
  bool read_end = false;
};

// process.socket_ends: a connected TCP socket the process holds.
struct SocketEndRecord {
  int64_t fd = 0;
  std::string local;
  std::string remote;
};

struct ProcessRecord {
  std::string source;  // the input it came from, as the user named it
  ProcessLabels labels;
  std::string command;  // the kernel's command name, "" unknown
  std::vector<ThreadRecord> threads;
  std::vector<std::string> deadlocks;  // the document's deadlock descriptions
  std::optional<double> taken_at;      // look.unix_time: when its stacks were read
  std::vector<PipeEndRecord> pipe_ends;
  std::vector<SocketEndRecord> socket_ends;
};

// `text` or `stream` parsed as JSON with every string value and key cut to kMaxTriageString as
// it is parsed (the document never holds more); `cut` counts the strings cut. A discarded value
// when it is not JSON. Every "modules" member (process.modules: the mapped files, which no triage
// reads) is left out.
nlohmann::json parse_bounded_json(std::istream& stream, size_t& cut);
nlohmann::json parse_bounded_json(const std::string& text, size_t& cut);

// The processes of one document: an object (one process) or an array of them (coreanalyze
// --json with several --pid). An error when it is not JSON, is neither, or a process has no
// "threads". `text` is parsed in place (its bytes are rewritten; triage/json_view.h says why) and
// every string kept is cut to kMaxTriageString; `cut` counts those cut.
//
// `scratch`, when given, is memory kept from one document to the next by the caller (a worker of
// many documents): the parse's values come from its first megabyte, so 10,000 documents cost no
// malloc, free and first-touch page faults of their own. Its `sharing`, when set, is the pool the
// stacks and frames' values are shared through (sharing_pool.h), one for every worker of a triage.
struct ParseScratch {
  std::vector<char> pool;
  SharingPool* sharing = nullptr;
};
Expected<std::vector<ProcessRecord>> records_from_text(std::string& text, const std::string& source, size_t& cut,
                                                       ParseScratch* scratch = nullptr);

// The same from a document already parsed (tests, and callers holding one): written out and read
// as above.
Expected<std::vector<ProcessRecord>> records_from_json(const nlohmann::json& document,
                                                       const std::string& source);

}  // namespace hangpy::triage
