// The analysis of one process, in one order for every target (process_target.h): a process that
// runs is read once as it runs (a warm pass), then held while its stacks are read (and read again
// when a thread it left asleep woke meanwhile), its native stacks walked while it is held; then,
// the process let go, the locals, the diagnosis, asyncio's tasks, the notes on built-in calls and
// the labels, each when asked for. `coreanalyze CORE`, `coreanalyze --pid` (and so collect's,
// watch's and triage's children), the fuzzer and gdb's module call analyse_process; gdb asks it
// for the stacks alone, and for the rest a command at a time (diagnose_threads_of, read_tasks).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/process_target.h"
#include "base/error.h"
#include "cpython/analyzer.h"
#include "cpython/asyncio_tasks.h"
#include "cpython/recording_target.h"
#include "cpython/target.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/task_waits.h"
#include "native/builtin_call_notes.h"
#include "cpython/stack_locals.h"
#include "native/splice.h"

namespace hangpy::analysis {

// Which parts to read beside the stacks.
struct Request {
  cpython::AnalyzeOptions analyze;
  // The stacks (and native stacks, when asked) alone: a shell that reads the rest a command at a
  // time (gdb: diagnose_threads_of, read_tasks) asks for no details, no labels.
  bool stacks_only = false;
  bool locals = false;               // --locals
  bool tasks = true;                 // unless --no-tasks
  cpython::AsyncioOptions task_options;
  bool call_notes = false;           // the built-ins native frames call (text output)
  bool native = false;               // --native: every Python thread's native stack, printed
  bool native_all = false;           // --native-all: every thread's
  bool inlined = false;              // --inlined: the functions inlined at each pc too
  // Without `native`: the threads the diagnosis leaves vague are unwound for it alone (what a
  // thread waits for must not depend on an option).
  bool native_for_diagnosis = true;
  bool record = false;               // --snapshot: everything read through a recording, kept
  // A process that runs: held while its stacks are read (coreanalyze --pid without --nonblocking).
  std::optional<HoldOptions> hold;
  // The process runs on this machine (--pid, --nonblocking too): asyncio's loop.time() is this
  // machine's time.monotonic(), read as the tasks are, so that a sleep says how long it has left.
  bool clock_is_ours = false;
};

// The parts, for a shell that reads them a command at a time (gdb: py-deadlock, py-threads,
// py-tasks).
// asyncio's tasks, and what they wait for.
diagnosis::TaskForest read_tasks(const cpython::Target& target, const cpython::ProcessStacks& stacks,
                                 const cpython::AsyncioOptions& options);
// Why each thread of `stacks` is stuck, made again with the native stacks of the threads it leaves
// vague (vague_threads) when `target` can unwind them.
diagnosis::ProcessDiagnosis diagnose_threads_of(const ProcessTarget& target, const cpython::ProcessStacks& stacks);

// The threads of `diagnosis` that native frames may explain: in a system call the diagnosis
// names no object of, in none it knows, or running (in C code the Python frames do not show:
// take_gil, a C library's wait). The one rule for every shell: coreanalyze (a core's or a live
// process's unwinder) and gdb (its own) unwind these.
std::set<int64_t> vague_threads(const cpython::ProcessStacks& stacks, const diagnosis::ProcessDiagnosis& diagnosis);

// Everything read after the stacks.
struct Details {
  std::optional<cpython::LocalsByFrame> locals;
  diagnosis::ProcessDiagnosis diagnosis;
  std::optional<diagnosis::TaskForest> tasks;
  std::optional<native::CallNotes> call_notes;
};

// How a process that runs was read.
struct HeldRead {
  // How long the process was held at each pass (from the first stop to the last release), in
  // order; none for a target that stands still, or read as it ran.
  std::vector<std::chrono::nanoseconds> stops;
  Hold::Threads threads;           // the last pass's
  bool realtime = false;
  std::vector<int64_t> moved;      // the threads that ran while read, every time
  int reads = 0;                   // how many times the stacks were read
  // When the stacks were read: as the last hold let the process go (or as they were read, for a
  // process read as it ran); none for a target that stands still.
  std::optional<std::chrono::system_clock::time_point> taken_at;
};

struct ProcessAnalysis {
  Expected<cpython::ProcessStacks> stacks = std::unexpected(Error{ErrorKind::kNotFound, "not read", {}});
  std::optional<native::MergedStacks> native;
  // Without `native`: the vague threads' stacks unwound for the diagnosis, when they were (a
  // snapshot records them, so that it diagnoses the same without the binaries).
  std::optional<native::MergedStacks> native_for_diagnosis;
  Details details;  // empty when the stacks could not be read
  cpython::ProcessEnvironment environment;
  // With Request::record: what the analysis read (the last pass's, for a process held), which a
  // snapshot holds.
  std::unique_ptr<cpython::RecordingTarget> recording;
  HeldRead held;
  // The unwinding session `native` or `native_for_diagnosis` came from, if any (its modules stay
  // open while it is kept: a caller that exits once it has printed leaves them to the kernel).
  std::unique_ptr<NativeUnwinding> unwinding;
  // Why a process that runs could not be held, or was held past its limit: then nothing else is.
  std::optional<HoldFailure> failure;
};

// Stacks, native stacks, details and labels of `target`, as `request` asks.
ProcessAnalysis analyse_process(ProcessTarget& target, const Request& request);

}  // namespace hangpy::analysis
