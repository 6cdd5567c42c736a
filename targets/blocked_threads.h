// Threads that sit in a system call, read without stopping them. A thread blocked in the kernel
// cannot move its Python stack, and interrupting it is not harmless: a pipe or socket write
// that has sent part of its bytes returns short when a ptrace stop interrupts it (CPython's
// buffered writer then drops the rest), epoll_wait returns EINTR, a connect may not resume. So
// a live read leaves such threads alone (process_stop.h stops only the others) and checks
// afterwards that each is still in the same call and has not run meanwhile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cpython/target.h"

namespace hangpy::targets {

struct BlockedThread {
  // What /proc shows of it: the call, its arguments, sp and pc, from /proc/PID/task/TID/syscall.
  cpython::NativeThread registers;
  std::string syscall_line;
  // How long it has run (/proc/.../schedstat), or where the kernel keeps no schedstat how often it
  // left the CPU (status): unchanged when it has not run since.
  std::optional<uint64_t> run_nanoseconds;
  uint64_t context_switches = 0;
};

// /proc/PID/task/TID/syscall: "running", or "NR ARG1..ARG6 SP PC" in hex after the decimal NR,
// or "-1 SP PC" outside a system call; `lwp` is the thread's id.
cpython::NativeThread parse_syscall_line(const std::string& text, int64_t lwp);

// The thread, when it is asleep in a system call (state S or D and a call number in the syscall
// file); nullopt when it runs, is runnable, stopped, gone, or /proc does not tell.
std::optional<BlockedThread> blocked_in_syscall(int pid, int64_t lwp);

// True when the thread is still in the same call (same number, arguments, sp, pc) and has not run
// since `before` was read.
bool still_blocked(int pid, const BlockedThread& before);

}  // namespace hangpy::targets
