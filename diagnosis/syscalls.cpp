#include "diagnosis/syscalls.h"

#include <array>
#include <utility>

namespace hangpy::diagnosis {
namespace {

struct Entry {
  int64_t number;
  std::string_view name;
  SyscallKind kind;
};

// arch/x86/entry/syscalls/syscall_64.tbl: the calls a thread blocks in, and a few common others.
constexpr std::array kTable = {
    Entry{0, "read", SyscallKind::kRead},
    Entry{1, "write", SyscallKind::kWrite},
    Entry{7, "poll", SyscallKind::kMultiplex},
    Entry{17, "pread64", SyscallKind::kRead},
    Entry{18, "pwrite64", SyscallKind::kWrite},
    Entry{19, "readv", SyscallKind::kRead},
    Entry{20, "writev", SyscallKind::kWrite},
    Entry{23, "select", SyscallKind::kMultiplex},
    Entry{24, "sched_yield", SyscallKind::kOther},
    Entry{34, "pause", SyscallKind::kSleep},
    Entry{35, "nanosleep", SyscallKind::kSleep},
    Entry{42, "connect", SyscallKind::kSocket},
    Entry{43, "accept", SyscallKind::kSocket},
    Entry{44, "sendto", SyscallKind::kSocket},
    Entry{45, "recvfrom", SyscallKind::kSocket},
    Entry{46, "sendmsg", SyscallKind::kSocket},
    Entry{47, "recvmsg", SyscallKind::kSocket},
    Entry{61, "wait4", SyscallKind::kChildWait},
    Entry{72, "fcntl", SyscallKind::kOther},
    Entry{73, "flock", SyscallKind::kOther},
    Entry{130, "rt_sigsuspend", SyscallKind::kSleep},
    Entry{128, "rt_sigtimedwait", SyscallKind::kSleep},
    Entry{202, "futex", SyscallKind::kFutex},
    Entry{230, "clock_nanosleep", SyscallKind::kSleep},
    Entry{232, "epoll_wait", SyscallKind::kMultiplex},
    Entry{247, "waitid", SyscallKind::kChildWait},
    Entry{270, "pselect6", SyscallKind::kMultiplex},
    Entry{271, "ppoll", SyscallKind::kMultiplex},
    Entry{281, "epoll_pwait", SyscallKind::kMultiplex},
    Entry{288, "accept4", SyscallKind::kSocket},
    Entry{299, "recvmmsg", SyscallKind::kSocket},
    Entry{441, "epoll_pwait2", SyscallKind::kMultiplex},
    Entry{449, "futex_waitv", SyscallKind::kFutex},
};

const Entry* find(int64_t number) {
  for (const Entry& entry : kTable)
    if (entry.number == number) return &entry;
  return nullptr;
}

struct Named {
  int64_t number;
  std::string_view name;
};

// Every call's name, from the kernel's header (diagnosis/CMakeLists.txt); the first entry stands
// for none, so that the table is never empty.
constexpr Named kAllNames[] = {
    {-1, ""},
#include "diagnosis/syscall_names_x86_64.inc"
};

// aarch64's calls: the kernel's generic table (asm-generic/unistd.h), read when the build is
// configured (diagnosis/CMakeLists.txt), as x86-64's.
constexpr Named kGenericNames[] = {
    {-1, ""},
#include "diagnosis/syscall_names_generic.inc"
};

}  // namespace

int64_t x86_64_syscall(cpython::Machine machine, int64_t number) {
  if (machine == cpython::Machine::kX86_64 || number < 0) return number;
  for (const Named& generic : kGenericNames) {
    if (generic.number != number || generic.name.empty()) continue;
    for (const Named& named : kAllNames)
      if (named.name == generic.name) return named.number;
    for (const Entry& entry : kTable)
      if (entry.name == generic.name) return entry.number;
    return -1;
  }
  return -1;
}

std::string_view syscall_name(int64_t number) {
  if (number < 0) return {};
  if (const Entry* entry = find(number)) return entry->name;
  for (const Named& named : kAllNames)
    if (named.number == number) return named.name;
  return {};
}

bool takes_file_descriptor(int64_t number) {
  switch (syscall_kind(number)) {
    case SyscallKind::kRead:
    case SyscallKind::kWrite:
    case SyscallKind::kSocket:
      return true;
    default:
      return number == 72 || number == 73;  // fcntl (F_SETLKW), flock
  }
}

SyscallKind syscall_kind(int64_t number) {
  const Entry* entry = find(number);
  return entry ? entry->kind : SyscallKind::kOther;
}

}  // namespace hangpy::diagnosis
