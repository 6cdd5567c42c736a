// libFuzzer target: a core file from any bytes through everything coreanalyze does without
// --native: the core reader (notes, segments, NT_FILE), the symbol note of snapshot cores, the
// version probe and layout check, the walker over the core's memory, thread names, the
// diagnosis (locks, cycles), asyncio's tasks, the locals' reprs (--locals), the environment on
// the initial stack (labels), the text and JSON reports with recursion folded, and the snapshot
// writer over what was read (--snapshot). Seeded with the snapshot cores of tests/corpus, whose
// mutations are corrupt process memory for the walker (thread lists that loop or run long).
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/process_analysis.h"
#include "targets/core_file.h"
#include "targets/core_target.h"
#include "cpython/recording_target.h"
#include "targets/snapshot_process.h"
#include "targets/snapshot_writer.h"
#include "fuzz/memory_file.h"
#include "report/asyncio_report.h"
#include "report/json_report.h"
#include "report/locals_report.h"
#include "report/process_labels.h"
#include "report/repeated_frames.h"
#include "report/stack_report.h"

using namespace ::hangpy::targets;

using namespace hangpy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::MemoryFile file(data, size);
  if (!file.ok()) return 0;
  targets::CoreOptions options;
  options.core_path = file.path();
  // The binaries a mutated core names must not be read from this machine: only the core counts.
  options.sysroot = "/nonexistent-hangpy-fuzz-sysroot";
  auto target = targets::CoreTarget::open(options);
  if (!target) return 0;
  report::AnalysedInput input;
  analysis::Request request;
  request.call_notes = true;
  request.locals = true;
  // libdwfl's unwinding of a mutated core is elfutils' to fuzz, and slow: not here.
  request.native_for_diagnosis = false;
  // Read through a recording, as --snapshot reads, so that the snapshot writer gets what was read.
  request.record = true;
  analysis::ProcessAnalysis found = analysis::analyse_process(**target, request);
  if (!found.stacks) return 0;
  input.environment = std::move(found.environment);
  const cpython::ProcessStacks& stacks = *found.stacks;
  (void)report::format_process(stacks, nullptr, report::TextStyle{}, &found.details.diagnosis);
  input.process = (*target)->process();
  (void)report::format_process_labels(input.process, input.environment, &stacks);
  const diagnosis::TaskForest& tasks = *found.details.tasks;
  (void)report::format_asyncio_tasks(tasks, stacks);
  nlohmann::json document = report::process_document(input, stacks);
  report::add_asyncio_tasks(document, tasks);
  if (found.details.locals) report::add_locals(document, stacks, *found.details.locals);
  report::fold_repeated_frames(document);
  (void)document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // The snapshot of what was read, renamed into place in the scratch directory (memory).
  if (!fuzz::scratch_directory().empty()) {
    (void)targets::write_snapshot(fuzz::scratch_directory() + "/snapshot.core",
                                      targets::snapshot_process_of((*target)->core()), *found.recording);
  }
  return 0;
}
