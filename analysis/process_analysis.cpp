#include "analysis/process_analysis.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "cpython/runtime_labels.h"

namespace hangpy::analysis {

namespace {

// Why each thread is stuck; `native`: the native stacks where there are some (some threads' may do).
diagnosis::ProcessDiagnosis diagnose_threads(const cpython::AddressSpace& memory,
                                             const cpython::ProcessStacks& stacks,
                                             const diagnosis::NativeStacks* native,
                                             const TargetFacts& facts,
                                             diagnosis::DiagnosisMemo* memo,
                                             bool native_stacks_follow = false) {
  diagnosis::DiagnosisInput why;
  why.stacks = &stacks;
  why.memory = &memory;
  why.native_stacks_follow = native_stacks_follow;
  why.memo = memo;
  why.os_threads = facts.os_threads;
  why.native = native;
  why.pid = facts.pid;
  why.function_at = facts.function_at;
  why.describe_fd = facts.describe_fd;
  why.namespace_pids = facts.namespace_pids;
  return diagnosis::diagnose(why);
}

bool vague_in_torch(const cpython::ProcessStacks& stacks, const std::set<int64_t>& vague) {
  for (const cpython::PythonThread& thread : stacks.threads) {
    if (!thread.native_thread_id || !vague.contains(static_cast<int64_t>(*thread.native_thread_id))) continue;
    if (diagnosis::runs_torch_code(thread)) return true;
  }
  return false;
}

// Whether a thread waits in a torch.distributed collective: then the backend's own threads (gloo's
// workers, NCCL's watchdog) are unwound too, to say what the collective waits for.
bool waits_in_collective(const diagnosis::ProcessDiagnosis& diagnosis) {
  return std::any_of(diagnosis.threads.begin(), diagnosis.threads.end(), [](const diagnosis::ThreadDiagnosis& thread) {
    return thread.blocked_on.kind == diagnosis::WaitKind::kCollective;
  });
}

std::set<int64_t> threads_without_python(const cpython::ProcessStacks& stacks) {
  if (!stacks.threads_without_python) return {};
  return std::set<int64_t>(stacks.threads_without_python->begin(), stacks.threads_without_python->end());
}

// Native stacks for the diagnosis alone: the threads (by LWP) whose Python frames and registers
// leave their wait vague (a futex, an unknown call) are unwound, so that "blocked on" names what
// the C/C++ code waits for (a DDP reducer, a pthread mutex, the GIL). One session of the target's
// unwinding, opened on the first ask, serves every ask; none when the target cannot unwind, or
// could unwind none of those asked.
using NativeForDiagnosis =
    std::function<std::optional<native::MergedStacks>(const cpython::ProcessStacks&, const std::set<int64_t>& lwps)>;

using UnwindingSession = std::shared_ptr<std::unique_ptr<NativeUnwinding>>;

NativeForDiagnosis unwinding_for_diagnosis(const ProcessTarget& target,
                                           UnwindingSession session = std::make_shared<std::unique_ptr<NativeUnwinding>>()) {
  return [&target, session](const cpython::ProcessStacks& stacks,
                            const std::set<int64_t>& lwps) -> std::optional<native::MergedStacks> {
    if (!*session) *session = target.native_unwinding(false);
    if (!*session) return std::nullopt;
    native::MergedStacks merged = (*session)->merged(stacks, false, &lwps);
    if (merged.empty()) return std::nullopt;
    return merged;
  };
}

// `diagnosis` (of `stacks`, made without native stacks) made again with the native stacks
// `for_diagnosis` unwinds: the vague threads', then, for a thread waiting in a collective, those of
// the threads that run no Python (the backend's workers). Returns the stacks it used, if any.
// `memo`: the one the diagnosis was made with, if any (the same memory and stacks).
std::optional<native::MergedStacks> diagnose_with_native_stacks(const cpython::AddressSpace& memory,
                                                                const cpython::ProcessStacks& stacks,
                                                                const TargetFacts& facts,
                                                                const NativeForDiagnosis& for_diagnosis,
                                                                diagnosis::ProcessDiagnosis& diagnosis,
                                                                diagnosis::DiagnosisMemo* memo) {
  std::optional<native::MergedStacks> used;
  const bool deferred = std::any_of(diagnosis.threads.begin(), diagnosis.threads.end(),
                                    [](const diagnosis::ThreadDiagnosis& thread) { return thread.lock_search_deferred; });
  std::set<int64_t> wanted = vague_threads(stacks, diagnosis);
  // A vague wait inside torch's Python code may be a collective its native frames will name (DDP's
  // backward): its backend's workers are walked in the same pass, one symbol lookup for all.
  const bool serving_known = waits_in_collective(diagnosis) || vague_in_torch(stacks, wanted);
  if (serving_known) wanted.merge(threads_without_python(stacks));
  if (!wanted.empty()) {
    used = for_diagnosis(stacks, wanted);
    if (used) diagnosis = diagnose_threads(memory, stacks, &*used, facts, memo);
  }
  // A wait the native frames just named a collective (DDP's backward): its backend's workers too.
  if (!serving_known && waits_in_collective(diagnosis)) {
    const std::set<int64_t> serving = threads_without_python(stacks);
    std::optional<native::MergedStacks> more = serving.empty() ? std::nullopt : for_diagnosis(stacks, serving);
    if (more) {
      if (!used) used.emplace();
      used->merge(*more);
      diagnosis = diagnose_threads(memory, stacks, &*used, facts, memo);
    }
  }
  // No native stacks came: the waits left for them are searched among the candidate locks now.
  if (!used && deferred) diagnosis = diagnose_threads(memory, stacks, nullptr, facts, memo);
  return used;
}

// The details of `stacks`, read from `target` (the one the stacks were read from, or its
// recording for a snapshot); `native`: the merged native stacks, when unwound. The event loops a
// task blocks are found once the diagnosis is final (after diagnose_with_native_stacks). `memo`:
// kept for the diagnoses made again of the same read (nullptr: none). `native_stacks_follow`:
// diagnose_with_native_stacks comes next (diagnosis::DiagnosisInput::native_stacks_follow).
Details read_details(const cpython::Target& target, const cpython::ProcessStacks& stacks,
                     const native::MergedStacks* native, const TargetFacts& facts,
                     const Request& request, diagnosis::DiagnosisMemo* memo,
                     bool native_stacks_follow = false) {
  const cpython::AddressSpace& memory = target.memory();
  Details details;
  if (request.locals) details.locals = cpython::read_all_locals(memory, stacks);
  details.diagnosis = diagnose_threads(memory, stacks, native, facts, memo, native_stacks_follow);
  if (request.tasks) details.tasks = read_tasks(target, stacks, request.task_options);
  if (native && request.call_notes && stacks.layout)
    details.call_notes = native::find_call_notes(target, *stacks.layout, *native);
  return details;
}

// What the program knows of itself now (cpython/runtime_labels.h), merged into `environment`:
// os.environ read from `target` itself, never through a recording (the snapshot keeps the label
// variables in its note, not the pages of os.environ, which hold every other variable too); the
// spawn index and DataLoader worker id read from `read` (a snapshot keeps those locals).
void add_program_labels(cpython::ProcessEnvironment& environment, const cpython::Target& target,
                        const cpython::Target& read, const cpython::ProcessStacks& stacks) {
  const std::map<std::string, std::string> now =
      cpython::read_environment_now(target.memory(), stacks, cpython::is_label_variable);
  const cpython::JobIndexes indexes = cpython::read_job_indexes(read.memory(), stacks);
  cpython::add_runtime_labels(environment, now, indexes);
}

// The stacks read with the process held (or as it stands, for a target that does not run): a
// thread left asleep in its system call that woke while read makes them be read again, a few
// times at most. The native stacks are walked in the same hold. Whether a thread ran is asked
// after the process is let go (asking /proc of a sleeping thread while it is held would lengthen
// every stop).
void read_stacks(ProcessTarget& target, const Request& request, ProcessAnalysis& analysis,
                 std::unique_ptr<NativeUnwinding>& printed) {
  constexpr int kMaxReads = 3;
  HeldRead& held = analysis.held;
  for (held.reads = 1;; ++held.reads) {
    std::unique_ptr<Hold> hold;
    if (request.hold) {
      auto stopped = target.hold(*request.hold);
      if (!stopped) {
        analysis.failure = stopped.error();
        return;
      }
      hold = std::move(*stopped);
    }
    if (hold && !hold->timed_out()) held.threads = hold->threads();
    const cpython::Target* read = &target;
    if (!hold || !hold->timed_out()) {
      // --snapshot: what this pass and the details read is what the snapshot keeps.
      if (request.record) {
        analysis.recording = std::make_unique<cpython::RecordingTarget>(target);
        read = analysis.recording.get();
      }
      // A held process's threads are named once it is let go (AnalyzeOptions::name_threads).
      cpython::AnalyzeOptions options = request.analyze;
      options.name_threads = !hold;
      analysis.stacks = cpython::analyze(*read, options);
      // --native: the stacks are walked while the process is held, their symbols named after.
      printed.reset();
      if ((request.native || request.native_all) && analysis.stacks && (hold || !request.hold)) {
        printed = target.native_unwinding(request.inlined);
        if (printed && hold) printed->walk();
      }
    }
    if (!hold) {
      if (request.clock_is_ours) held.taken_at = std::chrono::system_clock::now();
      return;
    }
    // --hold-stopped (for tests): the process stays held that long, each pass, unless the stop's
    // limit ends it.
    const auto hold_until = std::chrono::steady_clock::now() + request.hold->hold_for;
    while (!hold->timed_out() && std::chrono::steady_clock::now() < hold_until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto released_at = std::chrono::system_clock::now();
    held.stops.push_back(hold->release());
    if (hold->timed_out()) {
      // Undone at once, from the timer's handler: what was read is dropped.
      analysis.failure = hold->timeout_failure();
      return;
    }
    held.taken_at = released_at;
    if (analysis.stacks) cpython::name_threads(*read, *analysis.stacks);
    held.realtime = hold->realtime();
    held.moved = hold->moved();
    if (held.moved.empty() || held.reads == kMaxReads) return;
  }
}

}  // namespace

diagnosis::TaskForest read_tasks(const cpython::Target& target, const cpython::ProcessStacks& stacks,
                                 const cpython::AsyncioOptions& options) {
  return diagnosis::diagnose_tasks(cpython::read_asyncio_tasks(target, stacks, options));
}

std::set<int64_t> vague_threads(const cpython::ProcessStacks& stacks, const diagnosis::ProcessDiagnosis& diagnosis) {
  std::set<int64_t> vague;
  for (size_t i = 0; i < diagnosis.threads.size() && i < stacks.threads.size(); ++i) {
    const diagnosis::ThreadDiagnosis& thread = diagnosis.threads[i];
    const diagnosis::WaitKind kind = thread.blocked_on.kind;
    // Not a wait the diagnosis names (a lock, a collective, a child) whose GIL state alone is
    // unknown: 2.7 and 3.6 keep no GIL holder to read, and every thread of theirs would be
    // unwound for a word the report does not need.
    const bool unexplained = kind == diagnosis::WaitKind::kSyscall || kind == diagnosis::WaitKind::kUnknown ||
                             kind == diagnosis::WaitKind::kRunning;
    if (unexplained && stacks.threads[i].native_thread_id)
      vague.insert(static_cast<int64_t>(*stacks.threads[i].native_thread_id));
  }
  return vague;
}

diagnosis::ProcessDiagnosis diagnose_threads_of(const ProcessTarget& target, const cpython::ProcessStacks& stacks) {
  const TargetFacts facts = target.facts();
  diagnosis::DiagnosisMemo memo;
  diagnosis::ProcessDiagnosis diagnosis = diagnose_threads(target.memory(), stacks, nullptr, facts, &memo, true);
  diagnose_with_native_stacks(target.memory(), stacks, facts, unwinding_for_diagnosis(target), diagnosis, &memo);
  return diagnosis;
}

ProcessAnalysis analyse_process(ProcessTarget& target, const Request& request) {
  ProcessAnalysis analysis;
  // A process that runs is read once as it runs: the binaries opened, their symbols found, and
  // every page the stacks need read, so that the hold reads only those pages anew.
  if (request.hold) {
    // Unnamed, as the held passes read them: the pages the hold reads anew are the stacks' alone.
    cpython::AnalyzeOptions warm = request.analyze;
    warm.name_threads = false;
    if (auto first = cpython::analyze(target, warm)) {
      target.prepare_hold(*first, request.hold->stop_every_thread, [&] {
        (void)read_details(target, *first, nullptr, target.facts(), request, nullptr);
      });
    }
  }
  std::unique_ptr<NativeUnwinding> printed;
  read_stacks(target, request, analysis, printed);
  if (analysis.failure || !analysis.stacks) return analysis;
  const cpython::ProcessStacks& stacks = *analysis.stacks;
  const cpython::Target& read =
      analysis.recording ? static_cast<const cpython::Target&>(*analysis.recording) : target;
  if (printed) analysis.native = printed->merged(stacks, request.native_all);
  if (request.stacks_only) return analysis;
  const TargetFacts facts = target.facts();
  Request details_request = request;
  if (request.clock_is_ours) {
    details_request.task_options.monotonic_now =
        std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  // Kept between the diagnoses of this read (made again with native stacks below).
  diagnosis::DiagnosisMemo memo;
  const bool native_follow = !analysis.native && request.native_for_diagnosis;
  analysis.details = read_details(read, stacks, analysis.native ? &*analysis.native : nullptr, facts,
                                  details_request, &memo, native_follow);
  diagnosis::ProcessDiagnosis& diagnosis = analysis.details.diagnosis;
  if (native_follow) {
    UnwindingSession session = std::make_shared<std::unique_ptr<NativeUnwinding>>();
    analysis.native_for_diagnosis =
        diagnose_with_native_stacks(read.memory(), stacks, facts, unwinding_for_diagnosis(target, session), diagnosis, &memo);
    printed = std::move(*session);
  }
  analysis.unwinding = std::move(printed);
  // The loops a task blocks, from the diagnosis as it stands now: a thread the native stacks
  // explained (a task spinning in C code) blocks its loop as much as one the Python frames did.
  if (analysis.details.tasks)
    diagnosis.blocked_loops = diagnosis::find_blocked_loops(*analysis.details.tasks, stacks, diagnosis);
  analysis.environment = target.environment();
  add_program_labels(analysis.environment, target, read, stacks);
  return analysis;
}

}  // namespace hangpy::analysis
