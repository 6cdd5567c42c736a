// Why each thread does not move: its GIL state, system call, what it is blocked on, and the
// cycles of threads that wait for each other (deadlocks). Pure: reads the target's memory through
// the engine's readers, prints nothing. Cheap enough to run on every analysis: it needs only the
// stacks, the threads' registers and a few reads per thread; native frames, when the shell has
// them (coreanalyze --native, gdb), make some answers certain (take_gil, pthread mutexes,
// collectives) and add others.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpython/address_space.h"
#include "cpython/stacks.h"
#include "cpython/target.h"
#include "diagnosis/locks.h"
#include "native/splice.h"

namespace hangpy::diagnosis {

enum class GilState { kUnknown, kHolds, kWaits, kNeither };
const char* gil_state_name(GilState state);  // "unknown", "holds", "waits", "neither"

// What a thread waits for. The names (wait_kind_name) are the JSON schema's.
enum class WaitKind {
  kRunning,          // not waiting: running Python, or C code it called
  kGil,              // waiting for the GIL
  kLock,             // threading.Lock (_thread.lock)
  kRLock,            // threading.RLock
  kCondition,        // threading.Condition.wait
  kEvent,            // threading.Event.wait
  kSemaphore,        // threading.Semaphore / BoundedSemaphore.acquire
  kBarrier,          // threading.Barrier.wait
  kQueue,            // queue.Queue get/put
  kProcessQueue,     // multiprocessing queue / connection (DataLoader workers)
  kJoin,             // Thread.join
  kChildProcess,     // subprocess wait, os.waitpid
  kSleep,            // time.sleep and other sleeps
  kMultiplex,        // select, poll, epoll (selectors, asyncio)
  kSocket,           // socket recv/accept/connect
  kRead,             // read() of a file descriptor (pipes)
  kWrite,            // write() to a file descriptor (a full pipe)
  kPthreadMutex,     // a pthread mutex (native frames)
  kCollective,       // a torch distributed collective (c10d/gloo/NCCL frames)
  kThreadPool,       // a native thread pool's team (OpenMP, OpenBLAS, MKL frames)
  kGarbageCollection,
  kSyscall,          // some other system call
  // What only asyncio tasks wait for (diagnosis/task_waits.h); a task's asyncio.Lock, Event,
  // Condition, Semaphore, Queue and sleep are the kinds above.
  kTask,             // another task
  kFuture,           // a plain Future
  kGather,           // asyncio.gather's future (its children)
  kTaskGroup,        // the end of a TaskGroup (its tasks)
  kExecutor,         // loop.run_in_executor: a thread runs the function
  kOther,            // something named, of no kind above
  kUnknown,
};
const char* wait_kind_name(WaitKind kind);

struct BlockedOn {
  WaitKind kind = WaitKind::kUnknown;
  std::string what;                  // "Lock 0x7f12…", "the GIL", "child process 1234"
  std::optional<uint64_t> object;    // the Python object (or mutex) waited for
  std::optional<size_t> owner;       // index in ProcessStacks::threads of the thread it waits for
  std::optional<int64_t> owner_lwp;  // the owner's LWP, Python thread or not
  std::optional<int64_t> child_pid;            // as the reader sees it (the host's PID)
  std::optional<int64_t> child_namespace_pid;  // where the process runs in a PID namespace of its own
  bool owner_unknown = false;        // a lock whose owner memory cannot tell
  // Held by no thread of this process: an RLock whose owner is no thread here, a Lock waited
  // for by the process's only thread. What a fork leaves when another thread held the lock.
  bool holder_gone = false;
  // The holder's thread ident as the lock records it, where it is no thread here (holder_gone):
  // a triage finds that thread in the parent.
  std::optional<uint64_t> gone_owner_ident;
  std::string detail;                // more words: "acquired 2 times", "op allreduce"
  // A collective's: the backend's worker thread that runs it and what that thread waits for
  // ("waits for a peer to receive what it sends"). Apart from `what` and `detail`, which read the
  // same in every rank of a group, while ranks of one ring are at different steps of it.
  std::optional<int64_t> worker_lwp;
  std::string worker_waits;
  // A read or write of a pipe: the other processes holding its other end, the only ones that can
  // end the wait (a live process's /proc tells; empty when unknown).
  std::vector<int64_t> other_end_pids;
  // The file descriptor a read, write, send, receive or accept waits on, where registers say.
  std::optional<int64_t> fd;
  // A wait for a subprocess.Popen child whose stdout (1) or stderr (2) is a pipe this process
  // reads: the child's descriptors (a child that fills that pipe waits for this process).
  std::vector<int64_t> child_pipe_fds;
};

struct ThreadDiagnosis {
  GilState gil = GilState::kUnknown;
  bool in_gc = false;
  // Whether the target knows its OS threads' registers (a core cut before its notes does not):
  // without them, whether a thread is in a system call is unknown.
  bool registers_known = false;
  std::optional<int64_t> syscall;  // the number, when the thread is in one
  std::string syscall_name;        // empty when the table does not know it
  std::array<uint64_t, 6> syscall_arguments{};
  bool syscall_arguments_lost = false;  // see cpython::NativeThread
  std::optional<bool> daemon;      // threading.Thread.daemon where threading knows the thread
  bool main_thread = false;        // the process's first thread (LWP == pid)
  BlockedOn blocked_on;
  // Waits for work to come (classify.h's waits_for_work): a pool's worker between tasks, a
  // server's worker in accept. A hang is not there; a job's odd one out is never one of these.
  bool idle = false;
  std::vector<uint64_t> held_locks;  // Lock/RLock objects this thread holds, where memory says
  // A futex wait left vague for the native stacks to come (DiagnosisInput::native_stacks_follow):
  // the candidate locks were not searched for it.
  bool lock_search_deferred = false;
};

struct WaitCycle {
  std::vector<size_t> threads;  // indexes in ProcessStacks::threads, each waiting for the next
  std::string text;             // "deadlock: thread "A" (LWP 12) waits for ... held by "A""
};

// An event loop that runs none of its tasks: the task it is running blocks its thread (a blocking
// call inside a coroutine) or keeps it busy without awaiting. Every other task of the loop waits
// for that one call.
struct BlockedLoop {
  size_t thread = 0;     // index in ProcessStacks::threads: the loop's thread
  std::string task;      // the running task's name
  std::string text;      // "blocked event loop: task "fetcher" runs on thread ..."
};

// A chain of waits between threads and where it ends (wait_ends.h): each thread waits for the
// next; the last waits for none of this process's threads (it runs, or waits outside them).
struct WaitChain {
  // Indexes in ProcessStacks::threads: the threads that start it (each waiting for the same next
  // one, the same way), then one per step to the thread where it ends.
  std::vector<size_t> starts;
  std::vector<size_t> threads;
  bool ends_outside = false;    // the last waits for a child, a pipe's other end or a gone holder
  std::string text;             // "wait chain: thread "main" (LWP 1) waits for thread ..."
};

struct ProcessDiagnosis {
  bool no_gil = false;                  // free-threaded without a GIL: said once
  std::vector<ThreadDiagnosis> threads;  // parallel to ProcessStacks::threads
  std::vector<WaitCycle> cycles;
  std::vector<BlockedLoop> blocked_loops;  // with the asyncio tasks only (task_waits.h)
  std::vector<WaitChain> chains;           // where the waits between threads end (wait_ends.h)
  // What each thread that runs no Python is for, by LWP, where its native stack was unwound and
  // names a role (native_roles.h): "a gloo worker of the process group, running a collective:
  // waits for a peer to receive what it sends".
  std::map<int64_t, std::string> native_roles;
};

using NativeStacks = std::map<int64_t, native::MergedStack>;  // by LWP

// What a file descriptor of the process is ("pipe:[123], its read end held by PID 4242 (...)", a
// path, "TCP a:1 -> b:2") and, for a pipe, the other processes holding its other end.
struct FileDescriptorFacts {
  std::string text;
  std::vector<int64_t> other_end_pids;
};

// What a diagnosis reads that depends only on the memory and the Python stacks, kept for the
// next diagnosis of the same read: the analysis diagnoses a process again once native stacks
// explain its vague waits, and the locks every frame and module can reach (a torch rank's module
// globals run to thousands of objects) were a third of its default run, read three times.
struct DiagnosisMemo {
  std::optional<std::vector<LockState>> candidate_locks;
  // threading's Thread objects by ident (found through sys.modules when no frame runs threading
  // code: a torch rank's 1,500 module names compared).
  std::optional<std::unordered_map<uint64_t, uint64_t>> thread_objects;
  // The locks each thread holds through a `with` (LockReader::held_through_with over all its
  // frames), by thread index: every slot of its value stacks has its type read.
  std::optional<std::vector<std::vector<uint64_t>>> held_through_with;
};

struct DiagnosisInput {
  const cpython::ProcessStacks* stacks = nullptr;
  const cpython::AddressSpace* memory = nullptr;
  std::vector<cpython::NativeThread> os_threads;  // registers by LWP
  const NativeStacks* native = nullptr;            // optional
  int64_t pid = 0;                                 // 0: unknown (no thread is marked main)
  // Optional: the function containing a pc (a symbol lookup, no unwinding), so that a running
  // thread without native frames can still say "running C in sre_ucs1_match".
  std::function<std::optional<std::string>(uint64_t pc)> function_at;
  // Optional: what a file descriptor of the process is ("pipe:[123]", "TCP a:1 -> b:2", a path),
  // for a thread blocked on one; a live process's /proc tells, a core does not.
  std::function<std::optional<FileDescriptorFacts>(int64_t fd)> describe_fd;
  // Where the process runs in another PID namespace: its children's PIDs in both.
  std::vector<cpython::NamespacePid> namespace_pids;
  // Optional: kept between diagnoses of the same memory and stacks (nullptr: read anew).
  DiagnosisMemo* memo = nullptr;
  // The caller unwinds the threads this diagnosis leaves vague and diagnoses again with their
  // native stacks (analysis's diagnose_with_native_stacks). A futex wait of a thread in torch's
  // Python code is then left vague (ThreadDiagnosis::lock_search_deferred) before the candidate
  // locks are searched for it: it is nearly always a collective its native frames name (DDP's
  // backward), and the search (every object its frames' modules reach: thousands on a torch rank)
  // is made by the next diagnosis only if those frames do not explain the wait. A caller that
  // ends up without native stacks must diagnose again without this.
  bool native_stacks_follow = false;
};

// Whether the thread runs torch's Python code (a frame's file is under a torch/ directory): a
// vague wait there may be a collective that only its native frames name.
bool runs_torch_code(const cpython::PythonThread& thread);

ProcessDiagnosis diagnose(const DiagnosisInput& input);

// One line: what the thread waits for and who holds it ("Lock 0x7f… held by thread "B" (LWP 13)",
// "Lock 0x7f… (owner unknown)", "child process 4242 (subprocess wait)").
std::string describe_blocked_on(const BlockedOn& blocked, const cpython::ProcessStacks& stacks);

// "`Future.result` at app.py:22": the function `called` (its qualified name where the version has
// one) and the line of `caller` that calls it, by the file's base name.
std::string describe_call(const cpython::PythonFrame& called, const cpython::PythonFrame& caller);

// `thread "name" (LWP 12)`, or `thread 0x7f… (LWP 12)` for a thread threading does not name.
std::string thread_label(const cpython::PythonThread& thread);

}  // namespace hangpy::diagnosis
