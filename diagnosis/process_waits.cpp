#include "diagnosis/process_waits.h"

#include <fmt/format.h>

#include "base/printable.h"
#include "cpython/address_space.h"
#include "diagnosis/syscalls.h"

namespace hangpy::diagnosis::detail {
namespace {

constexpr size_t kMaxPathRead = 4096;  // PATH_MAX

}  // namespace

// A thread waiting inside a native thread pool (OpenMP, OpenBLAS, MKL): for its team's threads.
// A process with no other thread has lost them: a fork keeps only the forking thread, and a pool
// started before it waits for ever for workers the child does not have.
BlockedOn thread_pool_blocked_on(const Context& context, const NativeHint& hint, const ThreadDiagnosis& diagnosis) {
  BlockedOn blocked;
  blocked.kind = WaitKind::kThreadPool;
  if (only_thread(context)) {
    blocked.what = fmt::format("an {} pool whose threads it lost at fork", hint.thread_pool);
    blocked.holder_gone = true;
    blocked.detail = "set OMP_NUM_THREADS=1 before fork, or use spawn";
  } else {
    blocked.what = fmt::format("its {} thread pool (futex 0x{:x})", hint.thread_pool, diagnosis.syscall_arguments[0]);
  }
  return blocked;
}

// Whether the thread runs the interpreter's exit: threading joining the threads that are no
// daemons, multiprocessing joining its children and its queues' feeder threads.
bool in_exit(const std::vector<cpython::PythonFrame>& frames) {
  for (const cpython::PythonFrame& frame : frames) {
    const std::string_view file(frame.file);
    if ((frame.function == "_shutdown" || frame.function == "_exitfunc") && file.ends_with("/threading.py")) return true;
    if (frame.function == "_exit_function" && file.ends_with("/multiprocessing/util.py")) return true;
  }
  return false;
}

// Why the exit waits for the thread it joins, from what the facts say: threading's exit joins the
// threads that are no daemons; multiprocessing's finalizers also join a queue's feeder thread,
// a daemon, which must first write what was put on the queue (to a pipe someone must read).
std::string exit_join_reason(const Context& context, const ProcessDiagnosis& result, size_t index) {
  const BlockedOn& blocked = result.threads[index].blocked_on;
  const bool joins_daemon = blocked.owner && *blocked.owner < result.threads.size() &&
                            result.threads[*blocked.owner].daemon == true;
  if (!joins_daemon) return "at exit: a thread that is not a daemon must end first";
  for (const cpython::PythonFrame& frame : context.stacks.threads[index].frames) {
    if (frame.function == "_finalize_join" && std::string_view(frame.file).ends_with("/multiprocessing/queues.py"))
      return "at exit: multiprocessing flushes a queue; its feeder thread (a daemon) must first write "
             "what was put on it";
  }
  return "at exit: a finalizer joins this daemon thread";
}

// A thread in the interpreter's exit: a wait threading's exit makes that names no thread (3.13 on
// joins in C, on a futex of its own) is for the threads that are no daemons, which are named.
void mark_exit_wait(const Context& context, ProcessDiagnosis& result, size_t index) {
  BlockedOn& blocked = result.threads[index].blocked_on;
  if (blocked.kind == WaitKind::kSyscall || blocked.kind == WaitKind::kUnknown) {
    std::vector<size_t> others;
    for (size_t j = 0; j < result.threads.size(); ++j)
      if (j != index && result.threads[j].daemon == false) others.push_back(j);
    if (!others.empty()) {
      std::vector<std::string> names;
      for (size_t j : others) names.push_back(thread_label(context.stacks.threads[j]));
      blocked = BlockedOn{};
      blocked.kind = WaitKind::kJoin;
      blocked.what = fmt::format("{}", fmt::join(names, ", "));
      if (others.size() == 1) {
        blocked.owner = others.front();
        blocked.owner_lwp = lwp_of(context, others.front());
      }
    }
  }
  if (blocked.kind == WaitKind::kJoin) blocked.detail = exit_join_reason(context, result, index);
  else if (blocked.kind == WaitKind::kChildProcess) blocked.detail = "at exit: a child that is not a daemon must end first";
  else blocked.detail = (blocked.detail.empty() ? "" : blocked.detail + ", ") + "at exit";
}

// What the file descriptor a thread blocks on is, where the target can say: the file, the pipe,
// the socket's addresses.
void name_file_descriptor(const std::function<std::optional<FileDescriptorFacts>(int64_t)>& describe_fd,
                          ThreadDiagnosis& thread) {
  if (!thread.syscall || thread.syscall_arguments_lost || !takes_file_descriptor(*thread.syscall)) return;
  const int64_t fd = static_cast<int32_t>(thread.syscall_arguments[0]);
  if (fd < 0) return;
  thread.blocked_on.fd = fd;
  if (!describe_fd) return;
  auto what = describe_fd(fd);
  if (!what) return;
  BlockedOn& blocked = thread.blocked_on;
  const std::string text = fmt::format("fd {} is {}", fd, what->text);
  blocked.detail = blocked.detail.empty() ? text : blocked.detail + ", " + text;
  blocked.other_end_pids = what->other_end_pids;
}

// A process in a container names its children by its PID namespace's ids (wait4(6)): the child
// is told by the id its reader sees, which is the one a triage of the job knows it by.
void name_child_in_namespace(const std::vector<cpython::NamespacePid>& namespace_pids, ThreadDiagnosis& thread) {
  BlockedOn& blocked = thread.blocked_on;
  if (!blocked.child_pid || namespace_pids.empty()) return;
  const int64_t inside = *blocked.child_pid;
  for (const cpython::NamespacePid& pid : namespace_pids) {
    if (pid.namespace_pid != inside) continue;
    blocked.child_pid = pid.pid;
    blocked.child_namespace_pid = inside;
    const std::string old_text = fmt::format("child process {}", inside);
    if (blocked.what == old_text)
      blocked.what = fmt::format("child process {} ({} in its namespace)", pid.pid, inside);
    return;
  }
}

// A thread blocked opening a file (a FIFO's open waits for its other end, an NFS file's for its
// server): the path, read from the call's argument.
void name_opened_path(const Context& context, ThreadDiagnosis& thread) {
  if (!thread.syscall || thread.syscall_arguments_lost || (*thread.syscall != syscall_numbers::kOpen && *thread.syscall != syscall_numbers::kOpenat))
    return;
  const uint64_t address = thread.syscall_arguments[*thread.syscall == syscall_numbers::kOpen ? 0 : 1];
  auto path = cpython::read_c_string(context.memory, address, kMaxPathRead);
  if (!path || path->empty()) return;
  BlockedOn& blocked = thread.blocked_on;
  blocked.what = fmt::format("{} of {}", thread.syscall_name, printable(*path));
}

// The waits a worker loop makes for its next piece of work (a lock or a collective is never that;
// nor is a write: a writer blocks because its reader does not read, a queue's feeder thread with
// a full pipe among them, which has work in hand).
bool idle_wait(WaitKind kind) {
  switch (kind) {
    case WaitKind::kQueue:
    case WaitKind::kProcessQueue:
    case WaitKind::kMultiplex:
    case WaitKind::kSocket:
    case WaitKind::kCondition:
    case WaitKind::kSemaphore:
    case WaitKind::kRead:
    case WaitKind::kSleep:
    case WaitKind::kSyscall:
      return true;
    default:
      return false;
  }
}

}  // namespace hangpy::diagnosis::detail
