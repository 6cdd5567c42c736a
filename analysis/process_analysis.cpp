#include "analysis/process_analysis.h"

#include <algorithm>

namespace hangpy::analysis {

diagnosis::ProcessDiagnosis diagnose_threads(const cpython::AddressSpace& memory,
                                             const cpython::ProcessStacks& stacks,
                                             const diagnosis::NativeStacks* native,
                                             const TargetFacts& facts) {
  diagnosis::DiagnosisInput why;
  why.stacks = &stacks;
  why.memory = &memory;
  why.os_threads = facts.os_threads;
  why.native = native;
  why.pid = facts.pid;
  why.function_at = facts.function_at;
  why.describe_fd = facts.describe_fd;
  why.namespace_pids = facts.namespace_pids;
  return diagnosis::diagnose(why);
}

diagnosis::TaskForest read_tasks(const cpython::Target& target, const cpython::ProcessStacks& stacks,
                                 const cpython::AsyncioOptions& options) {
  return diagnosis::diagnose_tasks(cpython::read_asyncio_tasks(target, stacks, options));
}

Details read_details(const cpython::Target& target, const cpython::ProcessStacks& stacks,
                     const native::MergedStacks* native, const TargetFacts& facts,
                     const Request& request) {
  const cpython::AddressSpace& memory = target.memory();
  Details details;
  if (request.locals) details.locals = cpython::read_all_locals(memory, stacks);
  details.diagnosis = diagnose_threads(memory, stacks, native, facts);
  if (request.tasks) {
    details.tasks = read_tasks(target, stacks, request.task_options);
    details.diagnosis.blocked_loops = diagnosis::find_blocked_loops(*details.tasks, stacks, details.diagnosis);
  }
  if (native && request.call_notes && stacks.layout)
    details.call_notes = native::find_call_notes(target, *stacks.layout, *native);
  return details;
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

namespace {

bool vague_in_torch(const cpython::ProcessStacks& stacks, const std::set<int64_t>& vague) {
  for (const cpython::PythonThread& thread : stacks.threads) {
    if (!thread.native_thread_id || !vague.contains(static_cast<int64_t>(*thread.native_thread_id))) continue;
    for (const cpython::PythonFrame& frame : thread.frames)
      if (frame.file.find("/torch/") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

bool waits_in_collective(const diagnosis::ProcessDiagnosis& diagnosis) {
  return std::any_of(diagnosis.threads.begin(), diagnosis.threads.end(), [](const diagnosis::ThreadDiagnosis& thread) {
    return thread.blocked_on.kind == diagnosis::WaitKind::kCollective;
  });
}

std::set<int64_t> threads_without_python(const cpython::ProcessStacks& stacks) {
  if (!stacks.threads_without_python) return {};
  return std::set<int64_t>(stacks.threads_without_python->begin(), stacks.threads_without_python->end());
}

std::optional<native::MergedStacks> diagnose_with_native_stacks(const cpython::AddressSpace& memory,
                                                                const cpython::ProcessStacks& stacks,
                                                                const TargetFacts& facts,
                                                                const NativeForDiagnosis& for_diagnosis,
                                                                diagnosis::ProcessDiagnosis& diagnosis) {
  std::optional<native::MergedStacks> used;
  std::set<int64_t> wanted = vague_threads(stacks, diagnosis);
  // A vague wait inside torch's Python code may be a collective its native frames will name (DDP's
  // backward): its backend's workers are walked in the same pass, one symbol lookup for all.
  const bool serving_known = waits_in_collective(diagnosis) || vague_in_torch(stacks, wanted);
  if (serving_known) wanted.merge(threads_without_python(stacks));
  if (!wanted.empty()) {
    used = for_diagnosis(stacks, wanted);
    if (used) diagnosis = diagnose_threads(memory, stacks, &*used, facts);
  }
  // A wait the native frames just named a collective (DDP's backward): its backend's workers too.
  if (!serving_known && waits_in_collective(diagnosis)) {
    const std::set<int64_t> serving = threads_without_python(stacks);
    std::optional<native::MergedStacks> more = serving.empty() ? std::nullopt : for_diagnosis(stacks, serving);
    if (more) {
      if (!used) used.emplace();
      used->merge(*more);
      diagnosis = diagnose_threads(memory, stacks, &*used, facts);
    }
  }
  return used;
}

ProcessAnalysis analyse_process(const ProcessTarget& target, const Request& request, const NativeStep& unwind,
                                const NativeForDiagnosis& for_diagnosis) {
  return analyse_process(target, target.facts(), request, unwind, for_diagnosis);
}

ProcessAnalysis analyse_process(const cpython::Target& target, const TargetFacts& facts,
                                const Request& request, const NativeStep& unwind,
                                const NativeForDiagnosis& for_diagnosis) {
  ProcessAnalysis analysis{cpython::analyze(target, request.analyze), std::nullopt, std::nullopt, {}};
  if (!analysis.stacks) return analysis;
  if (unwind) analysis.native = unwind(*analysis.stacks);
  analysis.details = read_details(target, *analysis.stacks, analysis.native ? &*analysis.native : nullptr,
                                  facts, request);
  if (!analysis.native && for_diagnosis)
    analysis.native_for_diagnosis = diagnose_with_native_stacks(target.memory(), *analysis.stacks, facts, for_diagnosis,
                                                                analysis.details.diagnosis);
  return analysis;
}

}  // namespace hangpy::analysis
