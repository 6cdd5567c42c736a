// The analysis of one process, in one order for every target: its Python stacks, then (native
// stacks being the target's to unwind) the locals, the diagnosis, asyncio's tasks and the notes
// on built-in calls, each when asked for. `coreanalyze CORE`, `coreanalyze --pid` and the fuzzer
// call it; a live process reads its stacks while it is stopped and its details after (see
// coreanalyze/live_run.cpp), through the same read_details.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/process_target.h"
#include "base/error.h"
#include "cpython/analyzer.h"
#include "cpython/asyncio_tasks.h"
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
  bool locals = false;               // --locals
  bool tasks = true;                 // unless --no-tasks
  cpython::AsyncioOptions task_options;
  bool call_notes = false;           // the built-ins native frames call (text output)
};

// The parts of the details, for a shell that reads them one at a time (gdb: py-deadlock, py-tasks).
// Why each thread is stuck; `native`: the native stacks where the shell has them (some threads'
// may do).
diagnosis::ProcessDiagnosis diagnose_threads(const cpython::AddressSpace& memory,
                                             const cpython::ProcessStacks& stacks,
                                             const diagnosis::NativeStacks* native,
                                             const TargetFacts& facts);
// asyncio's tasks, and what they wait for.
diagnosis::TaskForest read_tasks(const cpython::Target& target, const cpython::ProcessStacks& stacks,
                                 const cpython::AsyncioOptions& options);

// Everything read after the stacks.
struct Details {
  std::optional<cpython::LocalsByFrame> locals;
  diagnosis::ProcessDiagnosis diagnosis;
  std::optional<diagnosis::TaskForest> tasks;
  std::optional<native::CallNotes> call_notes;
};

// The details of `stacks`, read from `target` (the one the stacks were read from, or its
// recording for a snapshot); `native`: the merged native stacks, when unwound.
Details read_details(const cpython::Target& target, const cpython::ProcessStacks& stacks,
                     const native::MergedStacks* native, const TargetFacts& facts,
                     const Request& request);

// The native stacks of a target, unwound after its Python stacks are read (a core's; a live
// process unwinds while stopped, before its details are read).
using NativeStep = std::function<std::optional<native::MergedStacks>(const cpython::ProcessStacks&)>;

// Native stacks for the diagnosis alone, when none are printed: the threads (by LWP) whose Python
// frames and registers leave their wait vague (a futex, an unknown call) are unwound, so that
// "blocked on" names what the C/C++ code waits for (a DDP reducer, a pthread mutex, the GIL).
using NativeForDiagnosis =
    std::function<std::optional<native::MergedStacks>(const cpython::ProcessStacks&, const std::set<int64_t>& lwps)>;

// The threads of `diagnosis` that native frames may explain: in a system call the diagnosis
// names no object of, in none it knows, or running (in C code the Python frames do not show:
// take_gil, a C library's wait). The one rule for every shell: coreanalyze (a core's or a live
// process's unwinder) and gdb (its own) unwind these.
std::set<int64_t> vague_threads(const cpython::ProcessStacks& stacks, const diagnosis::ProcessDiagnosis& diagnosis);

// Whether a thread waits in a torch.distributed collective: then the backend's own threads (gloo's
// workers, NCCL's watchdog) are unwound too, to say what the collective waits for.
bool waits_in_collective(const diagnosis::ProcessDiagnosis& diagnosis);
std::set<int64_t> threads_without_python(const cpython::ProcessStacks& stacks);

// `diagnosis` (of `stacks`, made without native stacks) made again with the native stacks
// `for_diagnosis` unwinds: the vague threads', then, for a thread waiting in a collective, those of
// the threads that run no Python (the backend's workers). Returns the stacks it used, if any.
std::optional<native::MergedStacks> diagnose_with_native_stacks(const cpython::AddressSpace& memory,
                                                                const cpython::ProcessStacks& stacks,
                                                                const TargetFacts& facts,
                                                                const NativeForDiagnosis& for_diagnosis,
                                                                diagnosis::ProcessDiagnosis& diagnosis);

struct ProcessAnalysis {
  Expected<cpython::ProcessStacks> stacks;
  std::optional<native::MergedStacks> native;
  // Without `native`: the vague threads' stacks `for_diagnosis` unwound, when it did (a snapshot
  // records them, so that it diagnoses the same without the binaries).
  std::optional<native::MergedStacks> native_for_diagnosis;
  Details details;  // empty when the stacks could not be read
};

// Stacks, native stacks (when `unwind` is given), details; without `unwind`, `for_diagnosis`
// (when given) unwinds the vague threads for the diagnosis.
ProcessAnalysis analyse_process(const ProcessTarget& target, const Request& request, const NativeStep& unwind = {},
                                const NativeForDiagnosis& for_diagnosis = {});
// The same, read through `target` (a recording of the process, for a snapshot) with `facts` (the
// process's own: ProcessTarget::facts() of what the recording records).
ProcessAnalysis analyse_process(const cpython::Target& target, const TargetFacts& facts,
                                const Request& request, const NativeStep& unwind = {},
                                const NativeForDiagnosis& for_diagnosis = {});

}  // namespace hangpy::analysis
