// x86-64 Linux system call numbers of the calls a hung thread sits in, by name. A small table on
// purpose: the calls that block (and the few a report names), not the whole kernel ABI. The
// diagnosis and its reports speak x86-64's numbers whatever the machine, so that the ranks of one
// job on x86-64 and aarch64 nodes compare: an aarch64 thread's call is translated by its name
// (x86_64_syscall).
#pragma once

#include <cstdint>
#include <string_view>

#include "cpython/target.h"

namespace hangpy::diagnosis {

// The system calls a report tells apart.
namespace syscall_numbers {
inline constexpr int64_t kRead = 0;
inline constexpr int64_t kOpen = 2;
inline constexpr int64_t kPoll = 7;
inline constexpr int64_t kSelect = 23;
inline constexpr int64_t kNanosleep = 35;
inline constexpr int64_t kAccept = 43;
inline constexpr int64_t kRecvfrom = 45;
inline constexpr int64_t kRecvmsg = 47;
inline constexpr int64_t kWait4 = 61;
inline constexpr int64_t kFutex = 202;
inline constexpr int64_t kEpollWait = 232;
inline constexpr int64_t kClockNanosleep = 230;
inline constexpr int64_t kWaitid = 247;
inline constexpr int64_t kPselect6 = 270;
inline constexpr int64_t kPpoll = 271;
inline constexpr int64_t kEpollPwait = 281;
inline constexpr int64_t kOpenat = 257;
inline constexpr int64_t kAccept4 = 288;
inline constexpr int64_t kEpollPwait2 = 441;
}  // namespace syscall_numbers

// "futex", "epoll_wait", "restart_syscall", ...: every call the kernel's header names; empty for
// a number it does not (and for -1: none).
std::string_view syscall_name(int64_t number);

// `number` of `machine`'s system call table as x86-64's number of the call of the same name; -1
// for none or a call x86-64 does not have. (aarch64 uses the kernel's generic table, whose calls
// all exist on x86-64 under the same names, save a few 32-bit-only ones.)
int64_t x86_64_syscall(cpython::Machine machine, int64_t number);

// What kind of waiting a system call is, for "blocked on" lines.
enum class SyscallKind { kOther, kFutex, kSleep, kMultiplex, kSocket, kRead, kWrite, kChildWait };
SyscallKind syscall_kind(int64_t number);

// Whether the call's first argument is the file descriptor it blocks on (read, write, recv,
// send, accept, connect, flock...).
bool takes_file_descriptor(int64_t number);

}  // namespace hangpy::diagnosis
