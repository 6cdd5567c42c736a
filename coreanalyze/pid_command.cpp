#include "coreanalyze/pid_command.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/process_analysis.h"
#include "base/exit_codes.h"
#include "base/output_file.h"
#include "coreanalyze/print_analysis.h"
#include "cpython/recording_target.h"
#include "native/merged_stacks.h"
#include "targets/live_hold.h"
#include "targets/live_snapshot.h"
#include "targets/live_target.h"
#include "targets/process_identity.h"
#include "targets/snapshot_writer.h"
#include "targets/thread_times.h"

namespace hangpy::coreanalyze {
using namespace ::hangpy::targets;
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

// Says what happened when the process is no longer the one the analysis began with.
std::optional<int> gone(int pid, const std::optional<ProcessIdentity>& identity) {
  if (auto change = process_change(pid, identity)) {
    fmt::print(stderr, "coreanalyze: {}\n", *change);
    return kExitProcessGone;
  }
  return std::nullopt;
}

// How the process was read, for the report: analyse_process's account of the hold, and what
// this command line adds (--nonblocking; each thread's CPU time and I/O, read just after).
struct LiveRead {
  bool nonblocking = false;
  analysis::HeldRead held;
  double taken_at = 0;  // Unix seconds
  std::map<int64_t, ThreadTime> times;
};

double milliseconds(std::chrono::nanoseconds duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

double total_stop_ms(const analysis::HeldRead& held) {
  std::chrono::nanoseconds total{0};
  for (auto stop : held.stops) total += stop;
  return milliseconds(total);
}

void add_live_facts(nlohmann::json& document, const LiveRead& read) {
  const analysis::HeldRead& held = read.held;
  document["core"] = nullptr;
  nlohmann::json live;
  live["nonblocking"] = read.nonblocking;
  // Every pass's stop: the process was held that long in all, and the longest at once.
  live["stopped_ms"] = held.stops.empty() ? nlohmann::json(nullptr) : nlohmann::json(total_stop_ms(held));
  nlohmann::json passes = nlohmann::json::array();
  for (auto stop : held.stops) passes.push_back(milliseconds(stop));
  live["stops_ms"] = std::move(passes);
  live["longest_stop_ms"] = held.stops.empty()
                                ? nlohmann::json(nullptr)
                                : nlohmann::json(milliseconds(*std::max_element(held.stops.begin(), held.stops.end())));
  live["stopped_threads"] = held.threads.stopped;
  live["threads_in_syscall"] = held.threads.in_syscall;
  live["threads_without_python_not_stopped"] = held.threads.left_running;
  live["moved_threads"] = held.moved;
  live["realtime"] = held.realtime;
  document["live"] = std::move(live);
}

std::string describe_read(int pid, const LiveRead& read) {
  if (read.nonblocking) {
    return fmt::format("process {} was read without stopping it (--nonblocking): a stack may be "
                       "torn", pid);
  }
  const analysis::HeldRead& held = read.held;
  const double stopped_ms = total_stop_ms(held);
  std::string text;
  if (held.threads.in_syscall == 0) {
    text = fmt::format("process {} ({} threads) was stopped for {:.3f} ms", pid,
                       held.threads.stopped, stopped_ms);
  } else if (held.threads.stopped == 0) {
    text = held.threads.in_syscall == 1
               ? fmt::format("process {} (1 thread, asleep in a system call) was read without "
                             "stopping it", pid)
               : fmt::format("process {} ({} threads, each asleep in a system call) was read "
                             "without stopping it", pid, held.threads.in_syscall);
  } else {
    text = fmt::format("process {}: {} threads were stopped for {:.3f} ms, {} asleep in system "
                       "calls were read without stopping them", pid, held.threads.stopped,
                       stopped_ms, held.threads.in_syscall);
  }
  if (held.threads.left_running > 0)
    text += fmt::format("; {} running no Python were not stopped", held.threads.left_running);
  if (held.reads > 1) {
    const double longest = held.stops.empty()
                               ? 0.0
                               : milliseconds(*std::max_element(held.stops.begin(), held.stops.end()));
    text += fmt::format(" (read {} times: a thread woke meanwhile; {:.3f} ms in all, the longest stop {:.3f} ms)",
                        held.reads, stopped_ms, longest);
  }
  if (!held.moved.empty()) {
    text += fmt::format("; thread(s) {} ran while read every time: their stacks may be torn",
                        fmt::join(held.moved, ", "));
  }
  return text;
}

// What a live process's analysis asks for (analysis/process_analysis.h): held while its stacks
// are read, unless --nonblocking.
analysis::Request live_request(const CommandLine& line) {
  analysis::Request request = analysis_request(line, "the process may not be a CPython interpreter");
  request.clock_is_ours = true;
  if (!line.nonblocking) {
    analysis::HoldOptions hold;
    hold.max_stop = std::chrono::milliseconds(line.max_stop_ms);
    hold.realtime = line.realtime;
    hold.hold_for = std::chrono::milliseconds(line.hold_stopped_ms);
    hold.stop_every_thread = line.native_all;
    request.hold = hold;
  }
  return request;
}

// --snapshot FILE for process `pid`: "%p" in FILE is the PID; with several processes, a FILE
// without it gets ".PID" appended, so that each process has its own.
std::string snapshot_path_for(const CommandLine& line, int pid) {
  std::string path = *line.snapshot_path;
  const std::string pid_text = std::to_string(pid);
  bool replaced = false;
  for (size_t at = path.find("%p"); at != std::string::npos; at = path.find("%p", at)) {
    path.replace(at, 2, pid_text);
    at += pid_text.size();
    replaced = true;
  }
  if (!replaced && line.pids.size() > 1) path += "." + pid_text;
  return path;
}

// Writes the snapshot of a live process from the pages `recording` kept. The process's own
// files (through /proc/PID/root) are never overwritten.
Expected<void> write_live_snapshot(const std::string& path, const LiveTarget& live,
                                   const report::AnalysedInput& input,
                                   const cpython::RecordingTarget& recording,
                                   const cpython::Environment& labels,
                                   const native::MergedStacks* native) {
  std::vector<std::string> process_files{fmt::format("/proc/{}/exe", live.process().pid)};
  for (const cpython::MappedModule& module : live.modules()) {
    if (auto file = live.module_file(module.path)) process_files.push_back(*file);
  }
  if (auto ok = check_not_an_input(path, process_files); !ok) return ok;
  static const std::vector<StoppedProcess::RegisterSet> kNoRegisters;
  const HoldState* held = live.last_hold();
  SnapshotProcess process = live_snapshot_process(input.process, held ? held->register_sets : kNoRegisters,
                                                  input.threads);
  process.label_variables = labels;
  if (native) process.native_stacks = native::recorded_native_stacks(*native);
  return write_snapshot(path, process, recording);
}

// The report of a process read: printed (text) or added to `documents` (--json), and its snapshot.
int report_live_process(const CommandLine& line, int pid, const LiveTarget& live,
                        analysis::ProcessAnalysis& found_all, const LiveRead& read,
                        std::vector<nlohmann::json>& documents, const std::optional<ProcessIdentity>& identity) {
  const Expected<cpython::ProcessStacks>& stacks = found_all.stacks;
  if (!stacks) {
    if (auto code = gone(pid, identity)) return *code;
    fmt::print(stderr, "coreanalyze: process {}: {}\n", pid, stacks.error().describe());
    return stacks.error().kind == ErrorKind::kInvalidInput ? kExitWrongLayout : kExitNoInterpreter;
  }
  const std::optional<native::MergedStacks>& merged = found_all.native;
  report::AnalysedInput input;
  input.core = fmt::format("pid {}", pid);
  input.process = live.process();
  input.process.taken_at = read.taken_at;
  input.threads = live.threads();
  add_thread_times(input.threads, read.times);
  // modules() gives a copy: its paths are moved, not copied again.
  for (cpython::MappedModule& module : live.modules()) input.modules.push_back(std::move(module.path));
  input.warnings = live.warnings();
  input.environment = std::move(found_all.environment);
  // Source lines are quoted from the process's own files, inside its container or chroot.
  CommandLine shown = line;
  shown.core.sysroot = fmt::format("/proc/{}/root", pid);
  const Findings found = findings_of(found_all.details, merged ? &*merged : nullptr);
  std::optional<Error> snapshot_error;
  std::string snapshot_path;
  if (line.snapshot_path) {
    snapshot_path = snapshot_path_for(line, pid);
    const auto& unwound = merged ? merged : found_all.native_for_diagnosis;
    if (auto written = write_live_snapshot(snapshot_path, live, input, *found_all.recording,
                                           input.environment.variables, unwound ? &*unwound : nullptr);
        !written)
      snapshot_error = written.error();
  }
  if (line.json) {
    nlohmann::json document = json_document(shown, input, *stacks, found);
    add_live_facts(document, read);
    documents.push_back(std::move(document));
  } else {
    fmt::print(stderr, "coreanalyze: note: {}\n", describe_read(pid, read));
    print_text(shown, input, *stacks, found);
  }
  if (snapshot_error) {
    fmt::print(stderr, "coreanalyze: snapshot of process {} not written: {}\n", pid,
               snapshot_error->describe());
    return kExitSnapshotFailed;
  }
  if (line.snapshot_path) {
    fmt::print(stderr, "coreanalyze: wrote snapshot {} of process {} ({} pages)\n", snapshot_path,
               pid, found_all.recording->pages().size());
  }
  return stacks->partial() ? kExitPartial : kExitSuccess;
}

// One process: opened, analysed (held while its stacks are read), reported. A failure that comes
// from the process exiting or running exec meanwhile (its reads then fail as if it were not
// Python, or not ours to read) is told as that.
int analyse_live_process(const CommandLine& line, int pid, std::vector<nlohmann::json>& documents) {
  const std::optional<ProcessIdentity> identity = process_identity(pid);
  auto target = LiveTarget::open(pid);
  if (!target) {
    if (auto code = gone(pid, identity)) return *code;
    fmt::print(stderr, "coreanalyze: {}\n", target.error().message);
    return exit_code_for(target.error());
  }
  LiveTarget& live = **target;
  analysis::ProcessAnalysis found_all = analysis::analyse_process(live, live_request(line));
  LiveRead read;
  read.nonblocking = line.nonblocking;
  read.held = found_all.held;
  if (read.held.taken_at)
    read.taken_at = std::chrono::duration<double>(read.held.taken_at->time_since_epoch()).count();
  // Only a document or a snapshot shows the time axis; a text report reads no more of /proc.
  if (line.json || line.snapshot_path) read.times = read_thread_times(pid);
  if (found_all.failure) {
    // A stop past --max-stop was undone at once; what was read is dropped and the run ends with
    // its own exit code.
    if (found_all.failure->kind != LiveFailure::Kind::kStopTimeout)
      if (auto code = gone(pid, identity)) return *code;
    fmt::print(stderr, "coreanalyze: {}\n", found_all.failure->message);
    return exit_code_for(*found_all.failure);
  }
  return report_live_process(line, pid, live, found_all, read, documents, identity);
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
