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

ProcessAnalysis analyse_process(const cpython::Target& target, const TargetFacts& facts,
                                const Request& request, const NativeStep& unwind) {
  ProcessAnalysis analysis{cpython::analyze(target, request.analyze), std::nullopt, {}};
  if (!analysis.stacks) return analysis;
  if (unwind) analysis.native = unwind(*analysis.stacks);
  analysis.details = read_details(target, *analysis.stacks, analysis.native ? &*analysis.native : nullptr,
                                  facts, request);
  return analysis;
}

}  // namespace hangpy::analysis
