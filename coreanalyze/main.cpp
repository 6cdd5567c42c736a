// coreanalyze: every thread's Python stack from a core file, offline.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>
#include <variant>

#include <fmt/format.h>

#include "analysis/process_analysis.h"
#include "jobs/collect_command.h"
#include "coreanalyze/command_line.h"
#include "targets/core_file.h"
#include "inputs/core_input.h"
#include "targets/core_target.h"
#include "inputs/coredumpctl.h"
#include "base/exit_codes.h"
#include "coreanalyze/pid_command.h"
#include "native/merged_stacks.h"
#include "base/output_file.h"
#include "coreanalyze/print_analysis.h"
#include "cpython/recording_target.h"
#include "targets/snapshot_writer.h"
#include "inputs/stdin_core.h"
#include "jobs/triage_run.h"
#include "jobs/watch_command.h"
#include "jobs/diff_command.h"
#include "cpython/analyzer.h"
#include "cpython/asyncio_tasks.h"
#include "diagnosis/diagnosis.h"
#include "report/builtin_calls_report.h"
#include "report/diagnosis_report.h"
#include "report/json_report.h"
#include "report/locals_report.h"
#include "report/native_report.h"
#include "report/process_facts.h"
#include "report/source_excerpt.h"
#include "report/stack_report.h"

using namespace ::hangpy::inputs;
using namespace ::hangpy::jobs;
using namespace ::hangpy::targets;

using namespace hangpy;
using namespace hangpy::coreanalyze;

namespace {

// Ends the process once a core's answer is printed, without destroying what the analysis holds:
// unmapping the core and each module's file (twice mapped by libdwfl and by us) and freeing the
// heap object by object cost a tenth of a run on a torch rank's core (31 munmap calls, each a TLB
// flush: 2-4 ms), which the kernel's exit does at once. The same trade as clang's -disable-free.
// Only for what holds no outside state: a core, never a live process (its threads must be let go
// by their destructors). Under AddressSanitizer the run returns as before, so that LeakSanitizer
// still finds what a core's analysis leaks (scripts/test --sanitize).
[[noreturn, maybe_unused]] void exit_leaving_teardown_to_kernel(int exit_code) {
  std::fflush(nullptr);
  std::_Exit(exit_code);
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

report::AnalysedInput analysed_input(const std::string& given_core, const CoreInput& unwrapped,
                                     const CoreTarget& target, cpython::ProcessEnvironment environment) {
  report::AnalysedInput input;
  input.environment = std::move(environment);
  input.core = given_core;
  input.process = target.process();
  input.threads = target.threads();
  // modules() gives a copy: its paths are moved, not copied again.
  for (cpython::MappedModule& module : target.modules()) input.modules.push_back(std::move(module.path));
  input.warnings = unwrapped.warnings;
  input.warnings.insert(input.warnings.end(), target.warnings().begin(), target.warnings().end());
  return input;
}

// A failed analysis in one line, the input's own problem first: a truncated core or a binary that
// is not the one the core ran explains a layout that "does not fit" better than the layout does.
int report_failure(const CoreTarget& target, const Error& error) {
  std::vector<InputCause> causes = target.causes();
  if (!causes.empty()) {
    const InputCause& cause = causes.front();
    fmt::print(stderr, "coreanalyze: {}; because of it: {}\n", cause.message, error.describe());
    switch (cause.kind) {
      case InputCause::Kind::kTruncatedCore: return kExitTruncated;
      case InputCause::Kind::kCorruptCore: return kExitBadInput;
      case InputCause::Kind::kWrongBinary: return kExitWrongBinary;
      case InputCause::Kind::kMissingBinaries: return kExitNoInterpreter;
    }
  }
  fmt::print(stderr, "coreanalyze: {}\n", error.describe());
  return error.kind == ErrorKind::kInvalidInput ? kExitWrongLayout : kExitNoInterpreter;
}

// Output printed with some stacks cut short: partial (5); when not one frame could be read and
// the core is truncated, the truncation is why (8).
int partial_exit_code(const CoreTarget& target, const cpython::ProcessStacks& stacks) {
  const bool some_frames = std::any_of(stacks.threads.begin(), stacks.threads.end(),
                                       [](const auto& thread) { return !thread.frames.empty(); });
  return !some_frames && target.core().truncation() ? kExitTruncated : kExitPartial;
}

// Every file this run read or will read, which a snapshot must never overwrite: the core, the
// binaries, and the source files the text output quotes.
std::vector<std::string> files_read(const CommandLine& line, const CoreTarget& target,
                                    const cpython::ProcessStacks& stacks) {
  std::vector<std::string> files = target.opened_files();
  files.push_back(line.core.core_path);
  if (line.core.executable) files.push_back(*line.core.executable);
  std::set<std::string> sources;
  for (const auto& thread : stacks.threads)
    for (const auto& frame : thread.frames) sources.insert(line.core.sysroot + frame.file);
  files.insert(files.end(), sources.begin(), sources.end());
  return files;
}

Expected<void> write_requested_snapshot(const CommandLine& line, const CoreTarget& target,
                                        const cpython::RecordingTarget& recording,
                                        const cpython::ProcessStacks& stacks,
                                        const cpython::Environment& labels,
                                        const native::MergedStacks* native) {
  const std::string& path = *line.snapshot_path;
  if (auto ok = check_not_an_input(path, files_read(line, target, stacks)); !ok) return ok;
  SnapshotProcess process = snapshot_process_of(target.core());
  process.label_variables = labels;
  if (native) process.native_stacks = native::recorded_native_stacks(*native);
  return write_snapshot(path, process, recording);
}

// The core the user named, as a plain core file: found through coredumpctl or spooled from
// standard input, then unwrapped (compressed cores, ABRT directories and apport reports).
struct NamedCore {
  std::string given;      // as the user named it ("coredumpctl:MATCH", "-", a path)
  std::string name;       // as messages call it ("standard input")
  std::string read_path;  // the file read before unwrapping
  CoreInput unwrapped;
};

// The named core, with line.core pointing at the plain core file; an exit code when there is none.
std::variant<int, NamedCore> find_core(CommandLine& line) {
  NamedCore named;
  named.given = line.core.core_path;
  named.name = named.given;
  if (line.coredumpctl_match) {
    auto path = core_from_coredumpctl(*line.coredumpctl_match);
    if (!path) {
      fmt::print(stderr, "coreanalyze: {}\n", path.error().describe());
      return kExitBadInput;
    }
    named.given = fmt::format("coredumpctl:{}", *line.coredumpctl_match);
    named.name = named.given;
    line.core.core_path = *path;
  } else if (named.given == "-") {
    auto path = core_path_from_stdin();
    if (!path) {
      fmt::print(stderr, "coreanalyze: {}\n", path.error().describe());
      return kExitBadInput;
    }
    named.name = "standard input";
    line.core.core_path = *path;
  }
  auto unwrapped = unwrap_core_input(line.core.core_path, named.name);
  if (!unwrapped) {
    fmt::print(stderr, "coreanalyze: {}\n", unwrapped.error().describe());
    return kExitBadInput;
  }
  named.read_path = line.core.core_path;
  named.unwrapped = std::move(*unwrapped);
  line.core.core_path = named.unwrapped.core_path;
  line.core.executable_hint = named.unwrapped.executable_hint;
  line.core.maps_hint = named.unwrapped.maps_hint;
  line.core.saved_open_files = named.unwrapped.saved_open_files;
  line.core.saved_environment = named.unwrapped.saved_environment;
  line.core.saved_environment_source = named.unwrapped.saved_environment_source;
  line.core.saved_host = named.unwrapped.saved_host;
  return named;
}

int analyse_core(CommandLine& line);

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "triage") return run_triage(argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "collect") return run_collect(argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "watch") return run_watch(argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "diff") return run_diff(argc - 1, argv + 1);
  CommandLine line;
  if (auto exit_code = parse_command_line(argc, argv, line)) return *exit_code;
  if (!line.pids.empty()) return analyse_live_processes(line);
  return analyse_core(line);
}

namespace {

// A core: opened, analysed, printed, and its snapshot written when asked for.
int analyse_core(CommandLine& line) {
  auto found_core = find_core(line);
  if (auto* exit_code = std::get_if<int>(&found_core)) return *exit_code;
  const NamedCore& named = std::get<NamedCore>(found_core);
  const std::string& given_core = named.given;
  const std::string& input_name = named.name;
  const std::string& read_path = named.read_path;
  const CoreInput* unwrapped = &named.unwrapped;

  auto target = CoreTarget::open(line.core);
  if (!target) {
    std::string message = target.error().describe();
    // The reader names the path it opened (/proc/self/fd/N for a spooled or unwrapped core); the
    // user gave another.
    if (line.core.core_path != unwrapped->core_name)
      message = replace_all(message, line.core.core_path, unwrapped->core_name);
    if (read_path != given_core) message = replace_all(message, read_path, input_name);
    for (const auto& warning : unwrapped->warnings) fmt::print(stderr, "coreanalyze: warning: {}\n", warning);
    fmt::print(stderr, "coreanalyze: {}\n", message);
    return kExitBadInput;
  }
  // With --snapshot, everything is read through a recording, which the snapshot then holds.
  analysis::ProcessAnalysis found_all =
      analysis::analyse_process(**target, analysis_request(line, "try --exe, --sysroot or --lib-path"));
  auto& stacks = found_all.stacks;
  if (!stacks) {
    for (const auto& warning : unwrapped->warnings) fmt::print(stderr, "coreanalyze: warning: {}\n", warning);
    return report_failure(**target, stacks.error());
  }
  report::AnalysedInput input =
      analysed_input(given_core, *unwrapped, **target, std::move(found_all.environment));

  // The snapshot comes before the output (the text output reads source files, which are no part
  // of it), but a snapshot that cannot be written costs the user no stacks: they are printed all
  // the same.
  std::optional<Error> snapshot_error;
  if (line.snapshot_path) {
    const auto& unwound = found_all.native ? found_all.native : found_all.native_for_diagnosis;
    if (auto written = write_requested_snapshot(line, **target, *found_all.recording, *stacks,
                                                input.environment.variables,
                                                unwound ? &*unwound : nullptr);
        !written)
      snapshot_error = written.error();
  }
  const Findings found = findings_of(found_all.details, found_all.native ? &*found_all.native : nullptr);
  if (!line.json) {
    for (const auto& note : unwrapped->notes) fmt::print(stderr, "coreanalyze: note: {}\n", note);
  }
  if (line.json) {
    print_json(json_document(line, input, *stacks, found));
  } else {
    print_text(line, input, *stacks, found);
  }
  if (snapshot_error) {
    fmt::print(stderr, "coreanalyze: snapshot not written: {}\n", snapshot_error->describe());
    return kExitSnapshotFailed;
  }
  if (line.snapshot_path) {
    fmt::print(stderr, "coreanalyze: wrote snapshot {} ({} pages)\n", *line.snapshot_path,
               found_all.recording->pages().size());
  }
  // A truncated core is partial even where every stack read: what it lost is unknown.
  const bool partial = stacks->partial() || (*target)->core().truncation();
  const int exit_code = partial ? partial_exit_code(**target, *stacks) : kExitSuccess;
  // --json keeps the warnings in the document; the cause of exit 8 is still one line on stderr,
  // as when the analysis fails (text output has printed it among the warnings).
  if (exit_code == kExitTruncated && line.json)
    fmt::print(stderr, "coreanalyze: {}; because of it: no Python frame could be read\n",
               *(*target)->core().truncation());
#if defined(__SANITIZE_ADDRESS__)
  return exit_code;
#else
  exit_leaving_teardown_to_kernel(exit_code);
#endif
}

}  // namespace
