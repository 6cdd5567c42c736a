#include "coreanalyze/print_analysis.h"

#include <unistd.h>

#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "report/asyncio_report.h"
#include "report/diagnosis_report.h"
#include "report/process_facts.h"
#include "report/process_labels.h"
#include "report/repeated_frames.h"
#include "report/source_excerpt.h"
#include "report/stack_report.h"
#include "base/printable.h"

namespace hangpy::coreanalyze {
using namespace ::hangpy::targets;
namespace {

// A core from another machine names its owner by that machine's ids: here the same uid may be
// another user, or root. Its ids are trusted only when the core is known to come from here: this
// machine's journal (--coredumpctl), or a host name it records that is this machine's. A core
// names no boot id, so a core whose host is unknown is taken as foreign. With --sysroot (the
// user's copy of that machine's files) the ids are that copy's.
bool ids_untrusted(const CommandLine& line, const report::AnalysedInput& input) {
  if (!line.core.sysroot.empty() || !line.pids.empty() || line.coredumpctl_match) return false;
  const std::optional<std::string> host = report::host_of(input.environment);
  char here[256] = {};
  return !host || ::gethostname(here, sizeof here - 1) != 0 || *host != here;
}

// Where source lines come from for this process, and whose permissions they follow: a core whose
// ids are not trusted has read only what anyone may.
report::SourcePolicy source_policy(const CommandLine& line, const report::AnalysedInput& input) {
  report::SourcePolicy policy;
  policy.root = line.core.sysroot;
  policy.enabled = !line.no_source;
  if (!ids_untrusted(line, input)) {
    policy.uid = input.process.uid;
    policy.gid = input.process.gid;
  }
  return policy;
}

// One note for the files not quoted because the process could not read them itself (or, for a
// core not known to come from here, because not anyone may).
void note_withheld(const report::FileSourceReader& sources, const CommandLine& line, const report::AnalysedInput& input) {
  if (sources.over_budget() > 0)
    fmt::print(stderr, "coreanalyze: note: source lines left out: {} file(s) over the budget of {} MB "
               "for all source files of one report\n",
               sources.over_budget(), report::FileSourceReader::kMaxBytesPerRun >> 20);
  if (sources.withheld().empty()) return;
  if (ids_untrusted(line, input)) {
    fmt::print(stderr,
               "coreanalyze: note: source lines of {} file(s) are not shown: this core is not known to come from "
               "this machine (its host is {}), so only files anyone may read are quoted; --sysroot names that "
               "machine's files (first: {})\n",
               sources.withheld().size(), printable(report::host_of(input.environment).value_or("unknown"), 200),
               printable(*sources.withheld().begin(), 200));
    return;
  }
  const std::string owner = input.process.uid ? fmt::format("uid {}", *input.process.uid) : "owner unknown";
  fmt::print(stderr,
             "coreanalyze: note: source lines of {} file(s) are not shown: the process ({}) could not "
             "read them itself (first: {})\n",
             sources.withheld().size(), owner, printable(*sources.withheld().begin(), 200));
}

}  // namespace

nlohmann::json json_document(const CommandLine& line, const report::AnalysedInput& input,
                             const cpython::ProcessStacks& stacks, const Findings& found) {
  nlohmann::json document = report::process_document(input, stacks);
  if (line.context_lines > 0) {
    report::FileSourceReader sources(source_policy(line, input));
    report::add_source_context(document, stacks, sources, line.context_lines);
    note_withheld(sources, line, input);
  }
  if (found.merged) report::add_native_stacks(document, stacks, *found.merged);
  if (found.diagnosis) report::add_diagnosis(document, stacks, *found.diagnosis);
  if (found.locals) report::add_locals(document, stacks, *found.locals);
  if (found.tasks) report::add_asyncio_tasks(document, *found.tasks);
  // Last: the other parts above find frames by their index.
  report::fold_repeated_frames(document);
  return document;
}

void print_json(const nlohmann::json& document) {
  // Python 2 strings are bytes, and corrupt memory is anything: never let text stop the output.
  fmt::print("{}\n", json_for_terminal(document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)));
}

void print_text(const CommandLine& line, const report::AnalysedInput& input,
                const cpython::ProcessStacks& stacks, const Findings& found) {
  // Everything a core or process says (its command, labels, file names in warnings) is escaped for
  // the terminal here or in the report's formatters (base/printable.h).
  for (const auto& warning : input.warnings) fmt::print(stderr, "coreanalyze: warning: {}\n", for_terminal(warning));
  for (const auto& warning : stacks.warnings) fmt::print(stderr, "coreanalyze: warning: {}\n", for_terminal(warning));
  for (const auto& note : stacks.notes) fmt::print(stderr, "coreanalyze: note: {}\n", for_terminal(note));
  // A core cut before its notes knows neither the pid nor the command: say so, not "0 ()".
  const std::string pid =
      input.process.pid != 0 ? std::to_string(input.process.pid) : std::string("(pid unknown)");
  const std::string command = !input.process.command.empty() ? input.process.command
                              : !input.process.executable.empty() ? input.process.executable
                                                                  : std::string("command unknown");
  fmt::print("{}", for_terminal(fmt::format("Process {} ({}), Python {} ({})\n{}{}\n", pid, command,
                                            stacks.version.text(), stacks.version_source,
                                            report::format_process_labels(input.process, input.environment, &stacks),
                                            report::format_process_facts(input.process, stacks)),
                                true));
  report::FileSourceReader sources(source_policy(line, input));
  report::TextStyle style;
  style.color = line.color;
  style.context_lines = line.context_lines;
  if (const cpython::LocalsByFrame* locals = found.locals) {
    style.after_frame = [locals](const cpython::PythonFrame& frame) {
      return report::format_frame_locals(*locals, frame);
    };
  }
  if (const native::CallNotes* call_notes = found.call_notes) {
    style.before_merged_frame = [call_notes](int64_t lwp, size_t index) {
      return report::format_call_notes(*call_notes, lwp, index);
    };
  }
  if (found.merged) {
    fmt::print("{}", report::format_process_native(stacks, *found.merged, &sources, style,
                                                   line.native_all, found.diagnosis));
  } else {
    fmt::print("{}", report::format_process(stacks, &sources, style, found.diagnosis));
  }
  if (found.tasks) fmt::print("{}", report::format_asyncio_tasks(*found.tasks, stacks));
  note_withheld(sources, line, input);
}

analysis::Request analysis_request(const CommandLine& line, std::string missing_binaries_remedy) {
  analysis::Request request;
  request.analyze.forced_version = line.python;
  request.analyze.missing_binaries_remedy = std::move(missing_binaries_remedy);
  request.locals = line.locals;
  request.tasks = line.tasks;
  request.task_options.max_tasks = line.max_tasks;
  request.call_notes = !line.json;  // the text output shows them
  request.native = line.native;
  request.native_all = line.native_all;
  request.inlined = line.inlined;
  request.record = line.snapshot_path.has_value();
  return request;
}

Findings findings_of(const analysis::Details& details, const native::MergedStacks* native) {
  Findings found;
  found.merged = native;
  found.locals = details.locals ? &*details.locals : nullptr;
  found.diagnosis = &details.diagnosis;
  found.tasks = details.tasks ? &*details.tasks : nullptr;
  found.call_notes = details.call_notes ? &*details.call_notes : nullptr;
  return found;
}

}  // namespace hangpy::coreanalyze
