// What the engine needs from a process or core besides memory: where symbols are, which threads
// exist and which files are mapped. Each shell (coreanalyze, gdbplugin) adapts its target to this.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cpython/address_space.h"

namespace hangpy::cpython {

// The machines whose processes and cores hangpy reads. CPython's structs have one layout on both
// 64-bit Linux ABIs; what differs is registers, system call numbers and native unwinding.
enum class Machine : uint8_t { kX86_64, kAarch64 };

// The machine this build runs on (a live process is one of its own).
#if defined(__aarch64__)
inline constexpr Machine kHostMachine = Machine::kAarch64;
#else
inline constexpr Machine kHostMachine = Machine::kX86_64;
#endif

// One OS thread of the target.
struct NativeThread {
  int64_t lwp = 0;
  // The thread's pthread_t (pthread_self()): on x86-64 the thread pointer register fs_base, where
  // glibc's `struct pthread` lives. 0 when unknown (aarch64 cores: thread_pointers.h finds it).
  uint64_t fs_base = 0;
  uint64_t pc = 0;
  uint64_t sp = 0;
  // The system call the thread is in, in `machine`'s numbering (-1: none, or the target cannot
  // tell), and its arguments in the kernel's order (x86-64 rdi, rsi, rdx, r10, r8, r9; aarch64
  // x0-x5). A thread stopped in a blocking call (futex, wait4, epoll_wait...) shows it here.
  int64_t syscall = -1;
  Machine machine = kHostMachine;
  std::array<uint64_t, 6> syscall_arguments{};
  // The call's arguments are not known: an aarch64 thread whose call had just returned an error
  // when the core was made (the signal that made it interrupted the call, or a timed wait timed
  // out) holds that error in x0, its first argument (qemu-user's cores show such threads right
  // after their svc; the kernel's rewind an interrupted call instead).
  bool syscall_arguments_lost = false;
  // The time axis (two looks compared: did it run, did it move data?): CPU time used so far, user
  // and system, and bytes read and written through system calls (/proc's rchar + wchar), where the
  // target tells them (a live process; a core's NT_PRSTATUS has the CPU time).
  std::optional<double> cpu_seconds{};
  std::optional<uint64_t> io_bytes{};
  // The thread's id in the PID namespace of its process, where that is not the target's own (a
  // container's process read from the host: /proc's NSpid). The thread states hold this id.
  std::optional<int64_t> namespace_lwp{};
  // Wanting the CPU (a live look): time spent runnable but waiting for a CPU so far
  // (/proc/PID/task/TID/schedstat), and the state letter (R runnable, S asleep, D in I/O...).
  // On a crowded CPU a spinning thread gets little CPU time and much of this.
  // (These last: NativeThread is initialised by position.)
  std::optional<double> run_delay_seconds{};
  std::optional<char> run_state{};
};

// A file mapped into the target (an executable or a shared library).
struct MappedModule {
  std::string path;        // as the target recorded it
  uint64_t start = 0;      // lowest mapped address
  uint64_t end = 0;        // one past the highest mapped address
  uint64_t load_bias = 0;  // runtime address minus the ELF file's virtual address
};

// The signal that made a core, as the kernel's siginfo (a core's NT_SIGINFO) records it.
struct SignalInfo {
  int number = 0;
  int code = 0;  // si_code: <= 0 sent by a process (SI_USER: kill, SI_TKILL: tgkill, ...),
                 // > 0 raised by the kernel (a fault's kind, such as SEGV_MAPERR)
  std::optional<int64_t> sender_pid;      // the sending process, when one sent it
  std::optional<uint32_t> sender_uid;
  std::optional<uint64_t> fault_address;  // SIGSEGV, SIGBUS, SIGILL, SIGFPE raised by a fault
};

// A pipe's end a process holds: the descriptor, the pipe (its inode, which both ends share) and
// which end it is. A process blocked at one end of a pipe can be woken only by the processes that
// hold its other end, which no single process's memory says: the targets that know their
// descriptors (/proc, a snapshot's note) list them, and a triage matches them across processes.
struct PipeEnd {
  int64_t fd = 0;
  uint64_t inode = 0;
  bool read_end = false;
};

// A connected TCP socket a process holds: its descriptor and both addresses ("127.0.0.1:8000",
// "[::1]:8000"). A thread blocked receiving on it waits for the process holding the socket with
// the two addresses swapped, on the same machine: a server and its client, a rank and its store.
struct SocketEnd {
  int64_t fd = 0;
  std::string local;
  std::string remote;
};

// The container a process runs in, as its cgroup path and namespaces tell (targets/containers.h).
struct ContainerInfo {
  // "docker", "podman", "containerd", "cri-o", "lxc", "systemd-nspawn"; "" when no runtime is
  // recognised and only the process's own PID namespace says it is in a container.
  std::string runtime;
  std::string id;       // the container's id as its runtime names it; "" when unknown
  std::string name;     // its name ("web-1"), where the runtime's records on this machine say
  std::string pod_uid;  // Kubernetes: the pod's UID, from the kubepods cgroup path
  bool own_pid_namespace = false;  // in another PID namespace than the one reading it
};

// A process in another PID namespace than its reader's names processes by that namespace's ids
// (its wait4(6) waits for the child the reader calls 23128): one process's id in both.
struct NamespacePid {
  int64_t pid = 0;            // as the reader sees it (the host's)
  int64_t namespace_pid = 0;  // in the process's own PID namespace
};

// Facts about the process a target shows, for reports (the engine itself does not need them).
struct ProcessInfo {
  int64_t pid = 0;
  std::string command;      // the command name (a core's pr_fname, /proc/PID/comm)
  std::string arguments;    // the command line as the kernel kept it (a core's pr_psargs)
  std::optional<int> signal;  // the signal that made the core (gcore records SIGSTOP, 19)
  std::optional<SignalInfo> signal_info;  // the same with its sender or fault, where recorded
  std::string executable;   // the main program's path (AT_EXECFN, or the first mapped file)
  // From a core's NT_PRPSINFO.
  std::optional<int64_t> parent_pid;
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<char> state;  // the process state letter at dump time (R, S, D, T, t, Z, ...)
  // When the look was taken, in Unix time (seconds): a live read's stop; a snapshot records it.
  std::optional<double> taken_at{};
  // The pipe ends it holds, where the target knows them (a live process's /proc, a snapshot's
  // note); empty for an ordinary core, which holds no descriptor table.
  std::vector<PipeEnd> pipe_ends;
  std::vector<SocketEnd> socket_ends;  // the same for its connected TCP sockets
  std::optional<ContainerInfo> container;  // a live process's, where it runs in one
  // In another PID namespace (a live read's /proc NSpid, a snapshot's note): the process's own
  // ids first, then its children's (and a snapshot's, its threads'); empty where the namespace
  // is the reader's or unknown.
  std::vector<NamespacePid> namespace_pids;
};

// A range of the target's memory.
struct MemoryRange {
  uint64_t start = 0;
  uint64_t end = 0;
};

class Target {
 public:
  virtual ~Target() = default;
  virtual const AddressSpace& memory() const = 0;
  // The runtime address of a data symbol, searched in every mapped module (the executable first).
  virtual std::optional<uint64_t> find_symbol(std::string_view name) const = 0;
  // The runtime address of a named section of any mapped module (CPython's own debug offsets:
  // .AsyncioDebug); targets that cannot tell return nothing.
  virtual std::optional<uint64_t> find_section(std::string_view /*name*/) const { return std::nullopt; }
  virtual std::vector<NativeThread> threads() const = 0;
  virtual std::vector<MappedModule> modules() const = 0;
  // Writable memory (static data, heap), where the runtime can be searched for when no symbol
  // names it. Targets that cannot tell return nothing, and the search is skipped.
  virtual std::vector<MemoryRange> writable_ranges() const { return {}; }
};

}  // namespace hangpy::cpython
