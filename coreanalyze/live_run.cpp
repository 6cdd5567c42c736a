#include "coreanalyze/live_run.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/process_analysis.h"
#include "coreanalyze/environment_sources.h"
#include "base/exit_codes.h"
#include "targets/live_snapshot.h"
#include "targets/live_target.h"
#include "base/output_file.h"
#include "coreanalyze/native_stacks.h"
#include "coreanalyze/print_analysis.h"
#include "targets/process_identity.h"
#include "targets/process_stop.h"
#include "targets/recording_target.h"
#include "cpython/asyncio_tasks.h"
#include "targets/snapshot_writer.h"
#include "targets/thread_pointers.h"
#include "targets/thread_times.h"
#include "cpython/analyzer.h"

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

// How the process was read, for the report: how long it was held stopped.
struct LiveRead {
  bool nonblocking = false;
  // How long the process was held stopped at each pass (from the first PTRACE_INTERRUPT to the
  // last PTRACE_DETACH; every thread stopped is held the whole window), in order; none with
  // --nonblocking.
  std::vector<std::chrono::nanoseconds> stops;
  bool realtime = false;  // the reader ran SCHED_FIFO while it held the process
  size_t stopped_threads = 0;
  size_t threads_in_syscall = 0;  // read in their system calls, never stopped
  size_t threads_left_running = 0;  // running no Python, never stopped
  std::vector<int64_t> moved;     // of those, the ones that ran while read, every time
  int reads = 0;                  // how many times the stacks were read
  // The time axis: when the stacks were read (Unix seconds) and each thread's CPU time and I/O,
  // read just after the process was released (reading /proc for each thread would lengthen the stop).
  double taken_at = 0;
  std::map<int64_t, ThreadTime> times;
};

double milliseconds(std::chrono::nanoseconds duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

double total_stop_ms(const LiveRead& read) {
  std::chrono::nanoseconds total{0};
  for (auto stop : read.stops) total += stop;
  return milliseconds(total);
}

void add_live_facts(nlohmann::json& document, const LiveRead& read) {
  document["core"] = nullptr;
  nlohmann::json live;
  live["nonblocking"] = read.nonblocking;
  // Every pass's stop: the process was held that long in all, and the longest at once.
  live["stopped_ms"] = read.stops.empty() ? nlohmann::json(nullptr) : nlohmann::json(total_stop_ms(read));
  nlohmann::json passes = nlohmann::json::array();
  for (auto stop : read.stops) passes.push_back(milliseconds(stop));
  live["stops_ms"] = std::move(passes);
  live["longest_stop_ms"] = read.stops.empty()
                                ? nlohmann::json(nullptr)
                                : nlohmann::json(milliseconds(*std::max_element(read.stops.begin(), read.stops.end())));
  live["stopped_threads"] = read.stopped_threads;
  live["threads_in_syscall"] = read.threads_in_syscall;
  live["threads_without_python_not_stopped"] = read.threads_left_running;
  live["moved_threads"] = read.moved;
  live["realtime"] = read.realtime;
  document["live"] = std::move(live);
}

std::string describe_read(int pid, const LiveRead& read) {
  if (read.nonblocking) {
    return fmt::format("process {} was read without stopping it (--nonblocking): a stack may be "
                       "torn", pid);
  }
  const double stopped_ms = total_stop_ms(read);
  std::string text;
  if (read.threads_in_syscall == 0) {
    text = fmt::format("process {} ({} threads) was stopped for {:.3f} ms", pid,
                       read.stopped_threads, stopped_ms);
  } else if (read.stopped_threads == 0) {
    text = read.threads_in_syscall == 1
               ? fmt::format("process {} (1 thread, asleep in a system call) was read without "
                             "stopping it", pid)
               : fmt::format("process {} ({} threads, each asleep in a system call) was read "
                             "without stopping it", pid, read.threads_in_syscall);
  } else {
    text = fmt::format("process {}: {} threads were stopped for {:.3f} ms, {} asleep in system "
                       "calls were read without stopping them", pid, read.stopped_threads,
                       stopped_ms, read.threads_in_syscall);
  }
  if (read.threads_left_running > 0)
    text += fmt::format("; {} running no Python were not stopped", read.threads_left_running);
  if (read.reads > 1) {
    const double longest = read.stops.empty()
                               ? 0.0
                               : milliseconds(*std::max_element(read.stops.begin(), read.stops.end()));
    text += fmt::format(" (read {} times: a thread woke meanwhile; {:.3f} ms in all, the longest stop {:.3f} ms)",
                        read.reads, stopped_ms, longest);
  }
  if (!read.moved.empty()) {
    text += fmt::format("; thread(s) {} ran while read every time: their stacks may be torn",
                        fmt::join(read.moved, ", "));
  }
  return text;
}

// What a live process's analysis asks for beside the stacks (analysis/process_analysis.h).
analysis::Request live_request(const CommandLine& line) {
  analysis::Request request = analysis_request(line, "the process may not be a CPython interpreter");
  // loop.time() is time.monotonic(): a sleep's timer says how long it has left.
  request.task_options.monotonic_now = std::chrono::duration<double>(
      std::chrono::steady_clock::now().time_since_epoch()).count();
  return request;
}

// --native: libdwfl set to unwind every thread from the registers read while the process is
// stopped and its memory (call walk() while it still is).
Expected<std::unique_ptr<native::DwflUnwinder>> open_unwinder(const CommandLine& line,
                                                                  const LiveTarget& live,
                                                                  const cpython::AddressSpace& memory,
                                                                  const StoppedProcess& stopped) {
  constexpr uint64_t kMaxVdsoBytes = 64 * 1024;
  native::DwflUnwinderOptions options;
  options.sysroot = fmt::format("/proc/{}/root", live.process().pid);
  options.inlined_frames = line.inlined;
  options.memory = &memory;
  for (const auto& thread : stopped.dwarf_registers()) {
    native::ThreadRegisters registers;
    registers.lwp = thread.lwp;
    registers.machine = cpython::kHostMachine;
    std::copy(thread.dwarf.begin(), thread.dwarf.end(), registers.dwarf.begin());
    options.threads.push_back(registers);
  }
  for (const cpython::MappedModule& module : live.modules())
    options.modules.push_back({module.path, module.start, module.end});
  if (auto vdso = live.vdso()) {
    std::vector<std::byte> image(std::min(kMaxVdsoBytes, vdso->end - vdso->start));
    if (live.memory().read(vdso->start, image)) {
      options.vdso_image = std::move(image);
      options.vdso_address = vdso->start;
    }
  }
  options.module_file = [&live](const std::string& recorded_path) {
    return live.module_file(recorded_path);
  };
  return native::DwflUnwinder::open(std::move(options));
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
                                   const RecordingTarget& recording,
                                   const StoppedProcess* stopped,
                                   const cpython::Environment& labels,
                                   const native::MergedStacks* native) {
  std::vector<std::string> process_files{fmt::format("/proc/{}/exe", live.process().pid)};
  for (const cpython::MappedModule& module : live.modules()) {
    if (auto file = live.module_file(module.path)) process_files.push_back(*file);
  }
  if (auto ok = check_not_an_input(path, process_files); !ok) return ok;
  static const std::vector<StoppedProcess::RegisterSet> kNoRegisters;
  SnapshotProcess process = live_snapshot_process(
      input.process, stopped ? stopped->register_sets() : kNoRegisters, input.threads);
  process.label_variables = labels;
  if (native) process.native_stacks = recorded_native_stacks(*native);
  return write_snapshot(path, process, recording);
}

// The first pass, with the process running: it opens the binaries, finds their symbols and reads
// every page the analysis needs. While the process is stopped those pages are read anew, in a few
// system calls, and the stacks walked; the details (locals, the diagnosis) are read after it is
// released, from the pages read while it was stopped (a page the first pass did not need is read
// from the running process). Returns the pthread_t of each thread state, which names its OS
// thread before 3.11: a thread read in its system call is matched to it through glibc's struct
// pthread (thread_pointers.h).
struct WarmUp {
  std::vector<uint64_t> thread_pointers;
  // The threads that run no Python, when every thread state names its OS thread (3.11+): the stop
  // leaves them running (process_stop.h). Empty when that cannot be told.
  std::set<int64_t> without_python;
  // Where glibc keeps a thread's LWP in its struct pthread (thread_pointers.h), looked up now.
  std::optional<uint64_t> pthread_offset;
  std::map<int64_t, uint64_t> thread_pointer_of_lwp;  // thread_pointers_by_lwp(), read now
};

WarmUp warm_up(LiveTarget& live, const analysis::Request& request, bool every_thread_unwound) {
  WarmUp warm;
  if (auto first = cpython::analyze(live, request.analyze)) {
    std::set<int64_t> python;
    std::vector<KnownThread> known;  // pthread_t and LWP: where glibc keeps the one in the other
    bool every_id_known = true;
    for (const auto& thread : first->threads) {
      warm.thread_pointers.push_back(thread.thread_id);
      if (thread.native_thread_id) {
        python.insert(*thread.native_thread_id);
        known.push_back({thread.thread_id, static_cast<int64_t>(*thread.native_thread_id)});
      } else {
        every_id_known = false;
      }
    }
    // An id that is none of the process's threads (a namespace's id that could not be matched)
    // leaves the thread that runs it unknown: then every thread is stopped, none left running.
    const std::vector<cpython::NativeThread> natives = live.threads();
    std::set<int64_t> lwps;
    for (const cpython::NativeThread& thread : natives) lwps.insert(thread.lwp);
    const bool every_id_matched =
        std::all_of(python.begin(), python.end(), [&](int64_t id) { return lwps.contains(id); });
    if (every_id_known && every_id_matched && !every_thread_unwound && !first->threads.empty()) {
      for (const cpython::NativeThread& thread : natives)
        if (!python.contains(thread.lwp)) warm.without_python.insert(thread.lwp);
    }
    // The pages of the stacks: what the stopped window reads anew. The details' (locals, the
    // diagnosis) are read after the release: reading them in the window too would lengthen it by
    // as many pages again.
    const std::vector<uint64_t> stack_pages = live.kept_pages();
    warm.pthread_offset = pthread_tid_offset(live, known);
    (void)analysis::read_details(live, *first, nullptr, live.facts(), request);
    warm.thread_pointer_of_lwp = thread_pointers_by_lwp(live, warm.thread_pointers, warm.pthread_offset);
    live.keep_only(stack_pages);
  }
  return warm;
}

// What the passes with the process stopped read.
struct StoppedRead {
  std::unique_ptr<StoppedProcess> stopped;      // none with --nonblocking
  std::unique_ptr<RecordingTarget> recording;  // what the last pass read (--snapshot keeps it)
  std::optional<Expected<cpython::ProcessStacks>> stacks;
  std::optional<Expected<std::unique_ptr<native::DwflUnwinder>>> unwinder;  // --native

  const cpython::Target& analyzed(const CommandLine& line, const LiveTarget& live) const {
    return line.snapshot_path ? static_cast<const cpython::Target&>(*recording) : live;
  }
};

// The stacks, read while the process is stopped (or running, with --nonblocking). Threads asleep
// in a system call are not stopped (process_stop.h); one that woke and ran while the stacks were
// read makes them be read again, a few times at most. Whether one did is asked of /proc after the
// process is let go (two files a sleeping thread: 300 reads for a torch rank, which would
// otherwise lengthen every stop): a thread that ran since it was first looked at ran during the
// read or just after it, and either reads it again. An exit code when the stop failed.
std::optional<int> read_stopped(const CommandLine& line, int pid, LiveTarget& live,
                                const analysis::Request& request, const WarmUp& warm,
                                LiveRead& read, StoppedRead& out, const std::optional<ProcessIdentity>& identity) {
  constexpr int kMaxReads = 3;
  for (read.reads = 1;; ++read.reads) {
    if (!line.nonblocking) {
      auto stop = StoppedProcess::stop(pid, std::chrono::milliseconds(line.max_stop_ms), warm.without_python,
                                       line.realtime);
      if (!stop) {
        if (auto code = gone(pid, identity)) return code;
        fmt::print(stderr, "coreanalyze: {}\n", stop.error().message);
        return exit_code_for(stop.error());
      }
      out.stopped = std::move(*stop);
      if (out.stopped->timed_out()) break;
      std::vector<cpython::NativeThread> threads = out.stopped->threads();
      fill_thread_pointers(live, warm.thread_pointers, threads, warm.pthread_offset, warm.thread_pointer_of_lwp);
      live.set_registers(std::move(threads));
      live.refresh_memory();
      read.stopped_threads = out.stopped->stopped_count();
      read.threads_in_syscall = out.stopped->left_in_syscall().size();
      read.threads_left_running = out.stopped->left_running();
    }
    // --snapshot: what this pass and the details read (the pages read while the process was
    // stopped) is what the snapshot keeps.
    out.recording = std::make_unique<RecordingTarget>(live);
    const cpython::Target& analyzed = out.analyzed(line, live);
    out.stacks = cpython::analyze(analyzed, request.analyze);
    // --native: the stacks are walked while the process is stopped, their symbols looked up after.
    out.unwinder.reset();
    if (line.native && *out.stacks && out.stopped) {
      out.unwinder = open_unwinder(line, live, analyzed.memory(), *out.stopped);
      if (*out.unwinder) (**out.unwinder)->walk();
    }
    if (!out.stopped || out.stopped->timed_out()) break;
    // --hold-stopped (for tests): the process stays stopped that long, each pass, unless
    // --max-stop ends it.
    const auto hold_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(line.hold_stopped_ms);
    while (!out.stopped->timed_out() && std::chrono::steady_clock::now() < hold_until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (out.stopped->timed_out()) break;
    read.taken_at = unix_time_now();
    read.stops.push_back(out.stopped->release());
    read.realtime = out.stopped->realtime();
    // A thread without Python that woke meanwhile changed no Python stack: no reason to read
    // them all again (an OpenMP pool wakes all the time while its rank computes).
    read.moved.clear();
    for (int64_t lwp : out.stopped->moved())
      if (!warm.without_python.contains(lwp)) read.moved.push_back(lwp);
    if (read.moved.empty() || read.reads == kMaxReads) break;
  }
  if (line.nonblocking || (out.stopped && out.stopped->timed_out())) read.taken_at = unix_time_now();
  if (out.stopped && out.stopped->timed_out()) read.stops.push_back(out.stopped->release());
  // Only a document or a snapshot shows the time axis; a text report reads no more of /proc.
  if (line.json || line.snapshot_path) read.times = read_thread_times(pid);
  // A stop past --max-stop was undone at once, from the timer's handler; what was read is
  // dropped and the run ends with its own exit code.
  if (out.stopped && out.stopped->timed_out()) {
    const LiveFailure failure = out.stopped->timeout_failure();
    fmt::print(stderr, "coreanalyze: {}\n", failure.message);
    return exit_code_for(failure);
  }
  return std::nullopt;
}

// Without --native, the threads the diagnosis leaves vague (and a collective's backend workers)
// are unwound for the diagnosis alone: those asleep in a system call (never stopped: their stacks
// stay as they were while they sleep), read from the process itself, not through a recording (a
// snapshot records the stacks instead: the ones returned).
std::optional<native::MergedStacks> diagnose_vague_threads(const CommandLine& line, const LiveTarget& live,
                                                           const StoppedRead& read_out,
                                                           const cpython::ProcessStacks& stacks,
                                                           analysis::Details& details) {
  if (!read_out.stopped) return std::nullopt;
  std::set<int64_t> asleep;
  for (const BlockedThread& thread : read_out.stopped->left_in_syscall()) asleep.insert(thread.registers.lwp);
  auto unwind = [&](const cpython::ProcessStacks& of, const std::set<int64_t>& lwps) -> std::optional<native::MergedStacks> {
    std::set<int64_t> wanted;
    for (int64_t lwp : lwps)
      if (asleep.contains(lwp)) wanted.insert(lwp);
    if (wanted.empty()) return std::nullopt;
    auto opened = open_unwinder(line, live, live.memory(), *read_out.stopped);
    return merge_native_stacks(opened, of, false, &wanted);
  };
  return analysis::diagnose_with_native_stacks(live.memory(), stacks, live.facts(), unwind, details.diagnosis);
}

// The report of a process read: printed (text) or added to `documents` (--json), and its snapshot.
int report_live_process(const CommandLine& line, int pid, const LiveTarget& live, StoppedRead& read_out,
                        const LiveRead& read, std::vector<nlohmann::json>& documents,
                        const std::optional<ProcessIdentity>& identity) {
  const Expected<cpython::ProcessStacks>& stacks = *read_out.stacks;
  std::optional<native::MergedStacks> merged;
  if (read_out.unwinder) merged = merge_native_stacks(*read_out.unwinder, *stacks, line.native_all);
  // The details from the pages read while the process was stopped (through the recording, with
  // --snapshot, so that the snapshot holds them).
  analysis::Details details;
  std::optional<native::MergedStacks> for_diagnosis;
  if (stacks) {
    details = analysis::read_details(read_out.analyzed(line, live), *stacks, merged ? &*merged : nullptr,
                                     live.facts(), live_request(line));
    if (!merged) for_diagnosis = diagnose_vague_threads(line, live, read_out, *stacks, details);
  }
  if (!stacks) {
    if (auto code = gone(pid, identity)) return *code;
    fmt::print(stderr, "coreanalyze: process {}: {}\n", pid, stacks.error().describe());
    return stacks.error().kind == ErrorKind::kInvalidInput ? kExitWrongLayout : kExitNoInterpreter;
  }
  report::AnalysedInput input;
  input.core = fmt::format("pid {}", pid);
  input.process = live.process();
  input.process.taken_at = read.taken_at;
  input.threads = live.threads();
  add_thread_times(input.threads, read.times);
  for (const auto& module : live.modules()) input.modules.push_back(module.path);
  input.warnings = live.warnings();
  input.environment = live_environment(pid);
  add_program_labels(input.environment, live, read_out.analyzed(line, live), *stacks);
  // Source lines are quoted from the process's own files, inside its container or chroot.
  CommandLine shown = line;
  shown.core.sysroot = fmt::format("/proc/{}/root", pid);
  const Findings found = findings_of(details, merged ? &*merged : nullptr);
  std::optional<Error> snapshot_error;
  std::string snapshot_path;
  if (line.snapshot_path) {
    snapshot_path = snapshot_path_for(line, pid);
    const auto& unwound = merged ? merged : for_diagnosis;
    if (auto written = write_live_snapshot(snapshot_path, live, input, *read_out.recording, read_out.stopped.get(),
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
               pid, read_out.recording->pages().size());
  }
  return stacks->partial() ? kExitPartial : kExitSuccess;
}

// One process: the warm pass, the stopped read, the report.
int analyse_live_process_as_is(const CommandLine& line, int pid, std::vector<nlohmann::json>& documents,
                               const std::optional<ProcessIdentity>& identity);

// One process; a failure that comes from the process exiting or running exec meanwhile (its reads
// then fail as if it were not Python, or not ours to read) is told as that.
int analyse_live_process(const CommandLine& line, int pid, std::vector<nlohmann::json>& documents) {
  const std::optional<ProcessIdentity> identity = process_identity(pid);
  return analyse_live_process_as_is(line, pid, documents, identity);
}

int analyse_live_process_as_is(const CommandLine& line, int pid, std::vector<nlohmann::json>& documents,
                               const std::optional<ProcessIdentity>& identity) {
  auto target = LiveTarget::open(pid);
  if (!target) {
    if (auto code = gone(pid, identity)) return *code;
    fmt::print(stderr, "coreanalyze: {}\n", target.error().message);
    return exit_code_for(target.error());
  }
  LiveTarget& live = **target;
  const analysis::Request request = live_request(line);
  LiveRead read;
  read.nonblocking = line.nonblocking;
  WarmUp warm;
  if (!line.nonblocking) warm = warm_up(live, request, line.native_all);
  StoppedRead stopped_read;
  if (auto failed = read_stopped(line, pid, live, request, warm, read,
                                 stopped_read, identity))
    return *failed;
  return report_live_process(line, pid, live, stopped_read, read, documents, identity);
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
