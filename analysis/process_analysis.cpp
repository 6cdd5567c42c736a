#include "analysis/process_analysis.h"

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
  return diagnosis::diagnose(why);
}

diagnosis::TaskForest read_tasks(const cpython::Target& target, const cpython::ProcessStacks& stacks,
                                 const cpython::AsyncioOptions& options) {
  return diagnosis::diagnose_tasks(cpython::read_asyncio_tasks(target, stacks, options));
}

Details read_details(const cpython::Target& target, const cpython::ProcessStacks& stacks,
                     const report::MergedStacks* native, const TargetFacts& facts,
                     const Request& request) {
  const cpython::AddressSpace& memory = target.memory();
  Details details;
  if (request.locals) details.locals = report::read_all_locals(memory, stacks);
  details.diagnosis = diagnose_threads(memory, stacks, native, facts);
  if (request.tasks) details.tasks = read_tasks(target, stacks, request.task_options);
  if (native && request.call_notes && stacks.layout)
    details.call_notes = report::find_call_notes(memory, *stacks.layout, *native);
  return details;
}

std::set<int64_t> vague_threads(const cpython::ProcessStacks& stacks, const diagnosis::ProcessDiagnosis& diagnosis) {
  std::set<int64_t> vague;
  for (size_t i = 0; i < diagnosis.threads.size() && i < stacks.threads.size(); ++i) {
    const diagnosis::WaitKind kind = diagnosis.threads[i].blocked_on.kind;
    if ((kind == diagnosis::WaitKind::kSyscall || kind == diagnosis::WaitKind::kUnknown) &&
        stacks.threads[i].native_thread_id)
      vague.insert(static_cast<int64_t>(*stacks.threads[i].native_thread_id));
  }
  return vague;
}

ProcessAnalysis analyse_process(const cpython::Target& target, const TargetFacts& facts,
                                const Request& request, const NativeStep& unwind,
                                const NativeForDiagnosis& for_diagnosis) {
  ProcessAnalysis analysis{cpython::analyze(target, request.analyze), std::nullopt, std::nullopt, {}};
  if (!analysis.stacks) return analysis;
  if (unwind) analysis.native = unwind(*analysis.stacks);
  analysis.details = read_details(target, *analysis.stacks, analysis.native ? &*analysis.native : nullptr,
                                  facts, request);
  if (!analysis.native && for_diagnosis) {
    const std::set<int64_t> vague = vague_threads(*analysis.stacks, analysis.details.diagnosis);
    if (!vague.empty()) {
      analysis.native_for_diagnosis = for_diagnosis(*analysis.stacks, vague);
      if (analysis.native_for_diagnosis)
        analysis.details.diagnosis =
            diagnose_threads(target.memory(), *analysis.stacks, &*analysis.native_for_diagnosis, facts);
    }
  }
  return analysis;
}

}  // namespace hangpy::analysis
