// The words of a diagnosis: the names of GIL states and wait kinds (docs/json-schema.md's), the
// "Blocked on" line, a thread's label.
#include "diagnosis/diagnosis.h"

#include <fmt/format.h>

namespace hangpy::diagnosis {

using cpython::PythonThread;

const char* gil_state_name(GilState state) {
  switch (state) {
    case GilState::kHolds: return "holds";
    case GilState::kWaits: return "waits";
    case GilState::kNeither: return "neither";
    case GilState::kUnknown: break;
  }
  return "unknown";
}

const char* wait_kind_name(WaitKind kind) {
  switch (kind) {
    case WaitKind::kRunning: return "running";
    case WaitKind::kGil: return "gil";
    case WaitKind::kLock: return "lock";
    case WaitKind::kRLock: return "rlock";
    case WaitKind::kCondition: return "condition";
    case WaitKind::kEvent: return "event";
    case WaitKind::kSemaphore: return "semaphore";
    case WaitKind::kBarrier: return "barrier";
    case WaitKind::kQueue: return "queue";
    case WaitKind::kProcessQueue: return "process_queue";
    case WaitKind::kJoin: return "join";
    case WaitKind::kChildProcess: return "child_process";
    case WaitKind::kSleep: return "sleep";
    case WaitKind::kMultiplex: return "select";
    case WaitKind::kSocket: return "socket";
    case WaitKind::kRead: return "read";
    case WaitKind::kWrite: return "write";
    case WaitKind::kPthreadMutex: return "pthread_mutex";
    case WaitKind::kCollective: return "collective";
    case WaitKind::kGarbageCollection: return "garbage_collection";
    case WaitKind::kSyscall: return "syscall";
    case WaitKind::kTask: return "task";
    case WaitKind::kFuture: return "future";
    case WaitKind::kGather: return "gather";
    case WaitKind::kTaskGroup: return "taskgroup";
    case WaitKind::kExecutor: return "executor";
    case WaitKind::kThreadPool: return "thread_pool";
    case WaitKind::kOther: return "other";
    case WaitKind::kUnknown: break;
  }
  return "unknown";
}

std::string describe_blocked_on(const BlockedOn& blocked, const cpython::ProcessStacks& stacks) {
  std::string owner;
  if (blocked.owner && *blocked.owner < stacks.threads.size()) {
    owner = thread_label(stacks.threads[*blocked.owner]);
  } else if (blocked.owner_lwp) {
    owner = fmt::format("LWP {}", *blocked.owner_lwp);
  }
  std::string text;
  switch (blocked.kind) {
    case WaitKind::kJoin:
      // The interpreter's exit waits as join() does, but nobody called join().
      text = (blocked.detail.starts_with("at exit") ? "the end of " : "Thread.join of ") +
             (owner.empty() ? blocked.what : owner);
      break;
    case WaitKind::kGil:
    case WaitKind::kLock:
    case WaitKind::kRLock:
    case WaitKind::kPthreadMutex:
      text = blocked.what;
      if (!owner.empty()) text += " held by " + owner;
      else if (blocked.holder_gone && blocked.detail.empty())
        text += " (no other thread here can release it: held when the process forked, or taken twice)";
      else if (blocked.holder_gone)
        return text + " (held when the process forked: " + blocked.detail + ")";
      else if (blocked.owner_unknown) text += " (owner unknown)";
      break;
    default:
      text = blocked.what;
      break;
  }
  if (!blocked.detail.empty()) text += " (" + blocked.detail + ")";
  return text;
}

std::string describe_call(const cpython::PythonFrame& called, const cpython::PythonFrame& caller) {
  std::string_view file = caller.file;
  if (size_t slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  return fmt::format("`{}` at {}:{}", called.qualname.empty() ? called.function : called.qualname, file,
                     caller.line ? fmt::format("{}", *caller.line) : std::string("?"));
}

std::string thread_label(const PythonThread& thread) {
  std::string text = thread.name ? fmt::format("thread \"{}\"", *thread.name)
                                 : fmt::format("thread 0x{:x}", thread.thread_id);
  if (thread.native_thread_id) text += fmt::format(" (LWP {})", *thread.native_thread_id);
  return text;
}

}  // namespace hangpy::diagnosis
