// A process as the analysis reads it, whatever it comes from: a cpython::Target (memory, symbols,
// threads, modules) that also says what it knows beside its memory (TargetFacts: its PID, its OS
// threads and their registers, its container's PIDs, the function a pc is in, what a file
// descriptor is), where its label variables come from, how its native stacks are unwound, and,
// for a process that runs, how it is held still while its stacks are read. targets::CoreTarget
// (cores and snapshots), targets::LiveTarget and gdbplugin::GdbTarget implement it, each once, so
// that no caller assembles a target's facts, unwinder or stop by hand: analyse_process
// (process_analysis.h) does, in one order for all of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cpython/process_environment.h"
#include "cpython/stacks.h"
#include "cpython/target.h"
#include "diagnosis/diagnosis.h"
#include "native/splice.h"

namespace hangpy::analysis {

// What the target knows besides its memory, which the diagnosis uses.
struct TargetFacts {
  int64_t pid = 0;
  std::vector<cpython::NativeThread> os_threads;
  std::function<std::optional<std::string>(uint64_t pc)> function_at;
  // What a file descriptor is (a live process's /proc; a core's saved notes); empty when the
  // target cannot say.
  std::function<std::optional<diagnosis::FileDescriptorFacts>(int64_t fd)> describe_fd;
  std::vector<cpython::NamespacePid> namespace_pids;  // ProcessInfo's: a container's process
};

// A target's native stacks, with each Python thread's frames spliced in, from one unwinding
// session asked several times (the diagnosis asks for its vague threads, then for a collective's
// backend workers): each call walks only the threads no call walked before.
class NativeUnwinding {
 public:
  virtual ~NativeUnwinding() = default;
  // Walks every thread's stack now, while the process is held; merged() then names the frames
  // after it is let go. A target that stands still needs no walk first.
  virtual void walk() {}
  // The merged stack of every Python thread with a known LWP and, with `all_threads`, the native
  // stack of every thread that runs no Python; `only` (with `all_threads` false): those threads
  // alone, by LWP. A thread that cannot be unwound gets an error instead of a stack.
  virtual native::MergedStacks merged(const cpython::ProcessStacks& stacks, bool all_threads,
                                      const std::set<int64_t>* only = nullptr) = 0;
};

// Why a process could not be opened or held: the kind chooses the exit code.
struct HoldFailure {
  enum class Kind { kNoProcess, kNotPermitted, kStopTimeout, kOther };
  Kind kind;
  std::string message;  // one line, saying what to do where something can be done
};

// How a process that runs is held while its stacks are read (coreanalyze --pid).
struct HoldOptions {
  std::chrono::milliseconds max_stop{100};  // --max-stop: past it, the stop is undone at once
  bool realtime = true;                     // the reader runs SCHED_FIFO while it holds, where permitted
  std::chrono::milliseconds hold_for{0};    // --hold-stopped (tests): each stop lasts at least this
                                            // (analyse_process waits it out)
  bool stop_every_thread = false;           // the threads running no Python too (--native-all)
};

// One stop of a process: while it lives, the target reads the stopped process (its memory read
// anew, its threads' registers as the stop read them).
class Hold {
 public:
  virtual ~Hold() = default;
  struct Threads {
    size_t stopped = 0;
    size_t in_syscall = 0;    // asleep in a system call: read without being stopped
    size_t left_running = 0;  // running no Python: never stopped
  };
  virtual Threads threads() const = 0;
  // True once the stop outlived HoldOptions::max_stop: the process is let go already, and what
  // was read is dropped (timeout_failure() says so in one line).
  virtual bool timed_out() const = 0;
  virtual HoldFailure timeout_failure() const = 0;
  // Lets the process go; returns how long it was held.
  virtual std::chrono::nanoseconds release() = 0;
  // After release(): the threads that run Python and ran while their stacks were read (left asleep
  // in a system call, they woke): their stacks may be torn, and the caller reads them again.
  virtual std::vector<int64_t> moved() const = 0;
  virtual bool realtime() const = 0;  // whether the reader ran at real-time priority
};

class ProcessTarget : public cpython::Target {
 public:
  // The facts as the target knows them now (a live process's threads are read again). The
  // functions it holds refer to the target, which must outlive them.
  virtual TargetFacts facts() const = 0;
  // The label variables and where they came from (a core's initial stack or libc's environ, what
  // its wrapper saved; a live process's /proc/PID/environ and this machine's name); empty where
  // the target cannot say.
  virtual cpython::ProcessEnvironment environment() const { return {}; }
  // An unwinding session of the target's threads (`inlined_frames`: the functions inlined at each
  // pc too, from DWARF; costly). A live process unwinds from the registers its last hold read,
  // and once let go only the threads that hold left asleep in their system calls, whose stacks
  // stay as they were; nullptr where the target cannot unwind (a live process never held).
  virtual std::unique_ptr<NativeUnwinding> native_unwinding(bool inlined_frames) const = 0;
  // For a target that runs: `first`, the stacks read while it ran, tells the holds to come which
  // threads run no Python (left running unless `stop_every_thread`) and which pages to read anew;
  // the target calls `read_details` at the point of the warm pass where the details' pages are to
  // be read too (they warm the symbol lookups, not the stop). Targets that stand still ignore it.
  virtual void prepare_hold(const cpython::ProcessStacks& /*first*/, bool /*stop_every_thread*/,
                            const std::function<void()>& /*read_details*/) {}
  // Stops a target that runs; nullptr for one that stands still (a core, gdb's stopped inferior).
  virtual std::expected<std::unique_ptr<Hold>, HoldFailure> hold(const HoldOptions& /*options*/) {
    return nullptr;
  }
};

}  // namespace hangpy::analysis
