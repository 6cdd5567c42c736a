// Holds a live process's threads stopped while its stacks are read, and makes sure it is let go:
// PTRACE_SEIZE + PTRACE_INTERRUPT on every thread that is not asleep in a system call (threads
// started meanwhile too), their registers read with PTRACE_GETREGS, PTRACE_DETACH on release() or
// destruction. A thread asleep in a system call is not touched (blocked_threads.h says why): its
// call, sp and pc come from /proc, and moved() tells, once its stack is read, whether it ran
// meanwhile (then the caller reads again). While the
// process is stopped, SIGINT, SIGTERM, SIGHUP and SIGQUIT to coreanalyze first detach every thread,
// then act as usual; a stop longer than its limit detaches every thread at once (from the timer's
// signal handler) and timed_out() says so: the caller ends the run with kExitStopTimeout and
// timeout_failure()'s line. One process at a time.
#pragma once


#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <vector>

#include "targets/blocked_threads.h"
#include "targets/live_target.h"
#include "targets/machine_registers.h"
#include "targets/reader_priority.h"
#include "cpython/target.h"

namespace hangpy::targets {

class StoppedProcess {
 public:
  // `leave_running`: threads known to run no Python (the analysis's first pass saw them all and
  // their thread states), which are not stopped either: a Python stack does not change under
  // them, and a training rank's OpenMP pool spinning at a look would otherwise lengthen its stop.
  // A thread not named there and not asleep in a system call (one started since) is stopped.
  // `realtime`: the calling thread runs SCHED_FIFO from the first interrupt to release(), where
  // permitted (reader_priority.h). `before_interrupt`, when set, is called once every thread
  // listed first is told asleep or not and before any is interrupted, with the LWPs of those
  // left asleep in their system calls: what is read for them alone can be read then, outside the
  // stop (moved() still tells whether one of them ran since it was found asleep).
  using BeforeInterrupt = std::function<void(const std::set<int64_t>& asleep)>;
  static LiveExpected<std::unique_ptr<StoppedProcess>> stop(int pid,
                                                            std::chrono::milliseconds limit,
                                                            const std::set<int64_t>& leave_running = {},
                                                            bool realtime = true,
                                                            const BeforeInterrupt& before_interrupt = {});
  ~StoppedProcess();
  StoppedProcess(const StoppedProcess&) = delete;
  StoppedProcess& operator=(const StoppedProcess&) = delete;

  // Each thread with its registers (fs_base, pc, sp, the system call it is in); a thread left in
  // its system call has only the call, sp and pc (fs_base 0: see thread_pointers.h).
  const std::vector<cpython::NativeThread>& threads() const { return threads_; }
  // How many threads were stopped, and those left running in their system calls.
  size_t stopped_count() const { return threads_.size() - left_in_syscall_.size() - left_running_; }
  // How many threads were left running because they run no Python (stop's leave_running).
  size_t left_running() const { return left_running_; }
  const std::vector<BlockedThread>& left_in_syscall() const { return left_in_syscall_; }
  // The LWPs of the threads left in their system calls that have left them or run since: their
  // stacks, as read, may be torn. Call before release().
  std::vector<int64_t> moved() const;
  // The same threads' general registers in the host's DWARF numbering (x86-64 rax, rdx, rcx, rbx,
  // rsi, rdi, rbp, rsp, r8-r15, then the pc; aarch64 x0-x30, sp, then the pc at 32), for unwinding
  // their native stacks (native::ThreadRegisters).
  struct DwarfRegisters {
    int64_t lwp = 0;
    std::array<uint64_t, 33> dwarf{};
    bool only_pc_and_sp = false;  // a thread left in its system call
  };
  const std::vector<DwarfRegisters>& dwarf_registers() const { return dwarf_registers_; }
  // The same threads' registers as PTRACE_GETREGSET gave them, for a snapshot core's NT_PRSTATUS.
  struct RegisterSet {
    int64_t lwp = 0;
    MachineRegisters registers{};
  };
  const std::vector<RegisterSet>& register_sets() const { return register_sets_; }
  // True once the stop outlived its limit: every thread is detached already.
  bool timed_out() const;
  LiveFailure timeout_failure() const;
  // Detaches every thread (once); returns how long the process was held stopped: from the first
  // PTRACE_INTERRUPT to the last PTRACE_DETACH (0 when every thread sat in a system call).
  std::chrono::nanoseconds release();
  // Whether the reader ran at real-time priority while the process was stopped.
  bool realtime() const { return realtime_ran_; }

 private:
  StoppedProcess(int pid, std::chrono::milliseconds limit, bool realtime)
      : pid_(pid), limit_(limit), realtime_(realtime) {}
  LiveExpected<void> stop_all(std::chrono::milliseconds limit, const std::set<int64_t>& leave_running,
                              const BeforeInterrupt& before_interrupt);
  void leave_in_syscall(BlockedThread thread);

  const int pid_;
  const std::chrono::milliseconds limit_;
  std::vector<cpython::NativeThread> threads_;
  std::vector<DwarfRegisters> dwarf_registers_;
  std::vector<RegisterSet> register_sets_;
  std::vector<BlockedThread> left_in_syscall_;
  std::chrono::steady_clock::time_point stopped_at_;
  std::chrono::nanoseconds stopped_for_{0};
  bool released_ = false;
  const bool realtime_;
  bool realtime_ran_ = false;
  RaisedPriority priority_;
  size_t left_running_ = 0;
};

}  // namespace hangpy::targets
