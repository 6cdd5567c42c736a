#include "targets/process_stop.h"

#include <dirent.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <elf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "base/parse_number.h"

namespace hangpy::targets {
namespace {

// The traced threads, for the signal handler: written before each PTRACE_SEIZE, so that a handler
// running at any point detaches every thread that may be attached (detaching one that is not
// fails harmlessly).
constexpr size_t kMaxThreads = 32768;
std::array<pid_t, kMaxThreads> g_traced{};
std::array<int, kMaxThreads> g_pending_signal{};  // a signal the thread stopped with: given back
volatile sig_atomic_t g_traced_count = 0;
// Set when the stop outlived its limit: every thread was detached then, from the handler; the
// owner sees it (timed_out()) and ends the run with kExitStopTimeout, as library code must not
// end the process itself.
volatile sig_atomic_t g_timed_out = 0;

constexpr std::array kReleasingSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM};
std::array<struct sigaction, kReleasingSignals.size()> g_previous_actions{};

long raw_ptrace(int request, pid_t tid, uintptr_t data) {
  return syscall(SYS_ptrace, request, tid, nullptr, data);
}

void detach_all() {
  const sig_atomic_t count = g_traced_count;
  for (sig_atomic_t i = 0; i < count; ++i) {
    raw_ptrace(PTRACE_DETACH, g_traced[i], static_cast<uintptr_t>(g_pending_signal[i]));
  }
}

// Async-signal-safe: syscalls only.
void release_on_signal(int signal) {
  detach_all();
  g_traced_count = 0;
  if (signal == SIGALRM) {
    g_timed_out = 1;
    return;
  }
  struct sigaction default_action{};
  default_action.sa_handler = SIG_DFL;
  sigaction(signal, &default_action, nullptr);
  raise(signal);
}

void install_handlers() {
  struct sigaction action{};
  action.sa_handler = release_on_signal;
  sigfillset(&action.sa_mask);  // one handler at a time
  for (size_t i = 0; i < kReleasingSignals.size(); ++i)
    sigaction(kReleasingSignals[i], &action, &g_previous_actions[i]);
}

void restore_handlers() {
  for (size_t i = 0; i < kReleasingSignals.size(); ++i)
    sigaction(kReleasingSignals[i], &g_previous_actions[i], nullptr);
}

void arm_timer(std::chrono::milliseconds limit) {
  itimerval timer{};
  timer.it_value.tv_sec = limit.count() / 1000;
  timer.it_value.tv_usec = (limit.count() % 1000) * 1000;
  setitimer(ITIMER_REAL, &timer, nullptr);
}

void disarm_timer() {
  itimerval timer{};
  setitimer(ITIMER_REAL, &timer, nullptr);
}

std::vector<pid_t> list_threads(int pid) {
  std::vector<pid_t> ids;
  DIR* directory = opendir(fmt::format("/proc/{}/task", pid).c_str());
  if (directory == nullptr) return ids;
  while (dirent* entry = readdir(directory)) {
    if (auto id = parse_decimal<pid_t>(entry->d_name)) ids.push_back(*id);
  }
  closedir(directory);
  return ids;
}

// The thread's general registers (NT_PRSTATUS, as a core holds them) and, on aarch64, its thread
// pointer (NT_ARM_TLS); PTRACE_GETREGSET works alike on both machines, unlike PTRACE_GETREGS.
std::optional<MachineRegisters> read_registers(pid_t tid) {
  MachineRegisters registers;
  registers.machine = cpython::kHostMachine;
  iovec io{registers.words.data(), MachineRegisters::word_count(cpython::kHostMachine) * 8};
  if (syscall(SYS_ptrace, PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_PRSTATUS), &io) != 0)
    return std::nullopt;
  if (cpython::kHostMachine == cpython::Machine::kAarch64) {
    iovec tls{&registers.arm_tls, sizeof registers.arm_tls};
    if (syscall(SYS_ptrace, PTRACE_GETREGSET, tid, reinterpret_cast<void*>(kNoteArmTls), &tls) != 0)
      registers.arm_tls = 0;
  }
  return registers;
}

}  // namespace

LiveExpected<std::unique_ptr<StoppedProcess>> StoppedProcess::stop(int pid,
                                                                   std::chrono::milliseconds limit,
                                                                   const std::set<int64_t>& leave_running,
                                                                   bool realtime,
                                                                   const BeforeInterrupt& before_interrupt) {
  std::unique_ptr<StoppedProcess> process(new StoppedProcess(pid, limit, realtime));
  g_timed_out = 0;
  g_traced_count = 0;
  install_handlers();
  if (auto stopped = process->stop_all(limit, leave_running, before_interrupt); !stopped) {
    process->release();
    return std::unexpected(stopped.error());
  }
  return process;
}

// Seizes every thread first (which does not stop it), then interrupts them all and waits for
// each stop, so that the stopped time covers only the interrupts, the waits and what follows.
LiveExpected<void> StoppedProcess::stop_all(std::chrono::milliseconds limit,
                                            const std::set<int64_t>& leave_running,
                                            const BeforeInterrupt& before_interrupt) {
  std::set<pid_t> seen;
  bool first_round = true;
  bool timer_armed = false;
  // Threads started after the listing are found by the next one; a process that starts threads
  // without end is given up on after a few rounds (the threads not stopped are only missing).
  for (int round = 0; round < 5 && !g_timed_out; ++round) {
    std::vector<pid_t> fresh;
    for (pid_t tid : list_threads(pid_)) {
      if (seen.insert(tid).second) fresh.push_back(tid);
    }
    if (fresh.empty() && !first_round) break;
    if (fresh.empty()) return std::unexpected(describe_access_failure(pid_, ESRCH, "stop"));
    std::vector<pid_t> seized;
    for (pid_t tid : fresh) {
      // Asleep in a system call, Python or not: read from /proc (the diagnosis unwinds such a
      // thread without Python when it may run a collective for the Python ones).
      if (auto blocked = blocked_in_syscall(pid_, tid)) {
        leave_in_syscall(std::move(*blocked));
        continue;
      }
      if (leave_running.contains(tid)) {  // runs, and runs no Python: known by its id alone
        threads_.push_back(cpython::NativeThread{tid, 0, 0, 0});
        ++left_running_;
        continue;
      }
      const sig_atomic_t slot = g_traced_count;
      if (static_cast<size_t>(slot) >= kMaxThreads) break;
      g_traced[slot] = tid;
      g_pending_signal[slot] = 0;
      g_traced_count = slot + 1;
      if (raw_ptrace(PTRACE_SEIZE, tid, 0) != 0) {
        const int error = errno;
        g_traced_count = slot;
        if (error == ESRCH) continue;  // the thread ended meanwhile
        return std::unexpected(describe_access_failure(pid_, error, "stop"));
      }
      seized.push_back(tid);
    }
    if (first_round && before_interrupt) {
      std::set<int64_t> asleep;
      for (const BlockedThread& thread : left_in_syscall_) asleep.insert(thread.registers.lwp);
      before_interrupt(asleep);
    }
    first_round = false;
    if (!timer_armed && !seized.empty()) {
      if (realtime_) {
        priority_ = RaisedPriority::raise();
        realtime_ran_ = priority_.raised();
      }
      arm_timer(limit);
      stopped_at_ = std::chrono::steady_clock::now();
      timer_armed = true;
    }
    for (pid_t tid : seized) raw_ptrace(PTRACE_INTERRUPT, tid, 0);
    for (pid_t tid : seized) {
      int status = 0;
      if (waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status)) continue;  // ended
      // A stop for a signal the thread was getting (not our interrupt): the signal is given
      // back when the thread is detached.
      if ((status >> 16) == 0) {
        for (sig_atomic_t i = 0; i < g_traced_count; ++i)
          if (g_traced[i] == tid) g_pending_signal[i] = WSTOPSIG(status);
      }
      if (auto registers = read_registers(tid)) {
        // An aarch64 thread stopped here is taken as out of any system call (one asleep in a call
        // was left in it above); x86-64's orig_rax says it either way.
        threads_.push_back(registers->native_thread(tid, false));
        dwarf_registers_.push_back({tid, registers->dwarf()});
        register_sets_.push_back({tid, *registers});
      }
    }
  }
  const auto by_lwp = [](const auto& a, const auto& b) { return a.lwp < b.lwp; };
  std::sort(left_in_syscall_.begin(), left_in_syscall_.end(),
            [](const auto& a, const auto& b) { return a.registers.lwp < b.registers.lwp; });
  std::sort(threads_.begin(), threads_.end(), by_lwp);
  std::sort(dwarf_registers_.begin(), dwarf_registers_.end(), by_lwp);
  std::sort(register_sets_.begin(), register_sets_.end(), by_lwp);
  return {};
}

// What a snapshot and the unwinder are given of a thread left in its system call: the call and
// its arguments in their registers, sp and pc; nothing else is known.
void StoppedProcess::leave_in_syscall(BlockedThread thread) {
  const cpython::NativeThread& known = thread.registers;
  threads_.push_back(known);
  MachineRegisters registers;
  registers.machine = cpython::kHostMachine;
  registers.set_pc(known.pc);
  registers.set_sp(known.sp);
  registers.set_syscall(known.syscall, known.syscall_arguments);
  DwarfRegisters dwarf{known.lwp, {}, true};
  const std::array<uint64_t, 33> order = registers.dwarf();
  const unsigned sp_index = registers.machine == cpython::Machine::kAarch64 ? 31 : 7;
  const unsigned pc_index = registers.machine == cpython::Machine::kAarch64 ? 32 : 16;
  dwarf.dwarf[sp_index] = order[sp_index];
  dwarf.dwarf[pc_index] = order[pc_index];
  dwarf_registers_.push_back(dwarf);
  register_sets_.push_back({known.lwp, registers});
  left_in_syscall_.push_back(std::move(thread));
}

bool StoppedProcess::timed_out() const { return g_timed_out != 0; }

LiveFailure StoppedProcess::timeout_failure() const {
  return {LiveFailure::Kind::kStopTimeout,
          fmt::format("process {} stayed stopped longer than {} ms (--max-stop); released it", pid_,
                      limit_.count())};
}

std::vector<int64_t> StoppedProcess::moved() const {
  std::vector<int64_t> lwps;
  for (const BlockedThread& thread : left_in_syscall_)
    if (!still_blocked(pid_, thread)) lwps.push_back(thread.registers.lwp);
  return lwps;
}

std::chrono::nanoseconds StoppedProcess::release() {
  if (released_) return stopped_for_;
  released_ = true;
  detach_all();
  const bool was_stopped = stopped_at_ != std::chrono::steady_clock::time_point{};
  if (was_stopped) stopped_for_ = std::chrono::steady_clock::now() - stopped_at_;
  priority_.restore();
  g_traced_count = 0;
  disarm_timer();
  restore_handlers();
  return stopped_for_;
}

StoppedProcess::~StoppedProcess() { release(); }

}  // namespace hangpy::targets
