#include "coreanalyze/live_run.h"

#include <chrono>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "coreanalyze/exit_codes.h"
#include "coreanalyze/live_target.h"
#include "coreanalyze/print_analysis.h"
#include "coreanalyze/process_stop.h"
#include "cpython/analyzer.h"

namespace hangpy::coreanalyze {
namespace {

int exit_code_for(const LiveFailure& failure) {
  switch (failure.kind) {
    case LiveFailure::Kind::kNoProcess: return kExitBadInput;
    case LiveFailure::Kind::kNotPermitted: return kExitNotPermitted;
    case LiveFailure::Kind::kStopTimeout: return kExitStopTimeout;
    case LiveFailure::Kind::kOther: return kExitBadInput;
  }
  return kExitBadInput;
}

// How the process was read, for the report: how long it was held stopped.
struct LiveRead {
  bool nonblocking = false;
  std::optional<std::chrono::nanoseconds> stopped_for;
  size_t stopped_threads = 0;
};

double milliseconds(std::chrono::nanoseconds duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

void add_live_facts(nlohmann::json& document, const LiveRead& read) {
  document["core"] = nullptr;
  nlohmann::json live;
  live["nonblocking"] = read.nonblocking;
  live["stopped_ms"] = read.stopped_for ? nlohmann::json(milliseconds(*read.stopped_for)) : nullptr;
  live["stopped_threads"] = read.stopped_threads;
  document["live"] = std::move(live);
}

std::string describe_read(int pid, const LiveRead& read) {
  if (read.nonblocking) {
    return fmt::format("process {} was read without stopping it (--nonblocking): a stack may be "
                       "torn", pid);
  }
  return fmt::format("process {} ({} threads) was stopped for {:.3f} ms", pid,
                     read.stopped_threads, milliseconds(read.stopped_for.value_or(
                                                std::chrono::nanoseconds{0})));
}

// One process: its report printed (text) or added to `documents` (--json).
int analyse_live_process(const CommandLine& line, int pid, std::vector<nlohmann::json>& documents) {
  auto target = LiveTarget::open(pid);
  if (!target) {
    fmt::print(stderr, "coreanalyze: {}\n", target.error().message);
    return exit_code_for(target.error());
  }
  LiveTarget& live = **target;
  cpython::AnalyzeOptions options;
  options.forced_version = line.python;
  options.missing_binaries_remedy = "the process may not be a CPython interpreter";
  LiveRead read;
  read.nonblocking = line.nonblocking;
  std::unique_ptr<StoppedProcess> stopped;
  if (!line.nonblocking) {
    // A first pass with the process running opens its binaries and finds their symbols, so that
    // the stopped pass only reads memory.
    (void)cpython::analyze(live, options);
    auto stop = StoppedProcess::stop(pid, std::chrono::milliseconds(line.max_stop_ms));
    if (!stop) {
      fmt::print(stderr, "coreanalyze: {}\n", stop.error().message);
      return exit_code_for(stop.error());
    }
    stopped = std::move(*stop);
    live.forget_memory();  // what the first pass read is stale
    live.set_registers(stopped->threads());
    read.stopped_threads = stopped->threads().size();
  }
  // Everything that reads the process's memory happens in the stopped window.
  auto stacks = cpython::analyze(live, options);
  std::optional<report::LocalsByFrame> locals;
  std::optional<diagnosis::ProcessDiagnosis> diagnosis;
  const std::vector<cpython::NativeThread> os_threads = live.threads();
  if (stacks) {
    if (line.locals) locals = report::read_all_locals(live.memory(), *stacks);
    diagnosis::DiagnosisInput why;
    why.stacks = &*stacks;
    why.memory = &live.memory();
    why.os_threads = os_threads;
    why.pid = pid;
    why.function_at = [&live](uint64_t pc) { return live.function_at(pc); };
    diagnosis = diagnosis::diagnose(why);
  }
  if (line.hold_stopped_ms > 0 && stopped) {
    std::this_thread::sleep_for(std::chrono::milliseconds(line.hold_stopped_ms));
  }
  if (stopped) read.stopped_for = stopped->release();

  if (!stacks) {
    fmt::print(stderr, "coreanalyze: process {}: {}\n", pid, stacks.error().describe());
    return stacks.error().kind == ErrorKind::kInvalidInput ? kExitWrongLayout : kExitNoInterpreter;
  }
  report::AnalysedInput input;
  input.core = fmt::format("pid {}", pid);
  input.process = live.process();
  for (const auto& module : live.modules()) input.modules.push_back(module.path);
  input.warnings = live.warnings();
  Findings found;
  found.locals = locals ? &*locals : nullptr;
  found.diagnosis = diagnosis ? &*diagnosis : nullptr;
  if (line.json) {
    nlohmann::json document = json_document(line, input, *stacks, found);
    add_live_facts(document, read);
    documents.push_back(std::move(document));
  } else {
    fmt::print(stderr, "coreanalyze: note: {}\n", describe_read(pid, read));
    print_text(line, input, *stacks, found);
  }
  return stacks->partial() ? kExitPartial : kExitSuccess;
}

}  // namespace

int analyse_live_processes(const CommandLine& line) {
  int exit_code = kExitSuccess;
  std::vector<nlohmann::json> documents;
  for (size_t i = 0; i < line.pids.size(); ++i) {
    if (i > 0 && !line.json) fmt::print("\n");
    std::fflush(stdout);
    const int code = analyse_live_process(line, line.pids[i], documents);
    if (exit_code == kExitSuccess) exit_code = code;
  }
  if (line.json) {
    if (line.pids.size() == 1 && documents.size() == 1) {
      print_json(documents.front());
    } else if (line.pids.size() > 1) {
      print_json(nlohmann::json(documents));
    }
  }
  return exit_code;
}

}  // namespace hangpy::coreanalyze
