#include "diagnosis/diagnosis.h"
#include "diagnosis/native_roles.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "cpython/frame_variables.h"
#include "cpython/instance_attributes.h"
#include "cpython/thread_names.h"
#include "diagnosis/classify.h"
#include "diagnosis/context.h"
#include "diagnosis/process_waits.h"
#include "diagnosis/import_waits.h"
#include "diagnosis/locks.h"
#include "diagnosis/pool_waits.h"
#include "diagnosis/syscalls.h"
#include "diagnosis/wait_ends.h"
#include "base/program_place.h"
#include "base/wait_graph.h"

namespace hangpy::diagnosis {
namespace {

using namespace detail;

using cpython::kAbsent;
using cpython::PythonThread;

std::string lock_what(const LockState& lock) {
  return fmt::format("{} 0x{:x}", lock.reentrant ? "RLock" : "Lock", lock.object);
}

// The owner of a lock, from the lock itself (RLock) or from the only thread that holds it
// through `with`; nullopt when memory does not say.
std::optional<size_t> lock_owner(const Context& context, const LockState& lock) {
  if (lock.reentrant) {
    if (lock.owner_ident == 0) return std::nullopt;
    return thread_by_ident(context, lock.owner_ident);
  }
  // The waiter itself counts: `with lock:` inside `with lock:` deadlocks its own thread.
  std::optional<size_t> holder;
  for (size_t i = 0; i < context.held.size(); ++i) {
    if (std::find(context.held[i].begin(), context.held[i].end(), lock.object) == context.held[i].end())
      continue;
    if (holder) return std::nullopt;  // two threads claim it: say nothing
    holder = i;
  }
  return holder;
}

// The thread whose end releases `lock`: threading gives each Thread a lock (_tstate_lock, 3.x)
// that its thread holds until it ends, which join() and the interpreter's exit wait for.
std::optional<size_t> thread_ending_with(const Context& context, uint64_t lock) {
  cpython::InstanceAttributes attributes(context.objects);
  for (const auto& [ident, object] : context.thread_objects) {
    auto tstate_lock = attributes.get(object, "_tstate_lock");
    if (tstate_lock && *tstate_lock == lock) return thread_by_ident(context, ident);
  }
  return std::nullopt;
}

void set_lock_wait(const Context& context, const LockState& lock, BlockedOn& blocked) {
  if (auto ending = thread_ending_with(context, lock.object)) {
    blocked.kind = WaitKind::kJoin;
    blocked.what = fmt::format("Thread 0x{:x}", context.stacks.threads[*ending].thread_id);
    blocked.object = lock.object;
    blocked.owner = ending;
    blocked.owner_lwp = lwp_of(context, *ending);
    return;
  }
  blocked.kind = lock.reentrant ? WaitKind::kRLock : WaitKind::kLock;
  blocked.what = lock_what(lock);
  blocked.object = lock.object;
  blocked.owner = lock_owner(context, lock);
  // After fork only the forking thread goes on in the child: a lock another thread held then
  // stays held for ever, by a thread that is not there.
  if (blocked.owner) {
    blocked.owner_lwp = lwp_of(context, *blocked.owner);
    // 2.7 keeps the thread states of the threads a fork left behind: a stale one may still hold
    // the lock in its frames. Its thread is no thread of this process.
    const uint64_t ident = context.stacks.threads[*blocked.owner].thread_id;
    if (!blocked.owner_lwp && thread_pointer_exists(context, ident) == false) {
      blocked.owner.reset();
      blocked.holder_gone = true;
      blocked.detail = fmt::format("its holder, thread 0x{:x}, is not in this process", ident);
    }
  } else if (lock.reentrant && lock.owner_ident != 0) {
    if (thread_pointer_exists(context, lock.owner_ident) == false) {
      blocked.holder_gone = true;
      blocked.detail = fmt::format("its holder, thread 0x{:x}, is not in this process", lock.owner_ident);
    } else {
      blocked.detail = fmt::format("owner thread 0x{:x} runs no Python", lock.owner_ident);
    }
  } else {
    blocked.owner_unknown = true;
    blocked.holder_gone = !lock.reentrant && only_thread(context);
  }
  if (lock.reentrant && lock.count) blocked.detail = fmt::format("acquired {} time{}", *lock.count, *lock.count == 1 ? "" : "s");
}

const LockState* lock_waited_at(const Context& context, uint64_t futex_address) {
  for (const LockState& lock : candidate_locks(context))
    if (context.locks.waited_on_at(lock, futex_address)) return &lock;
  return nullptr;
}

// Whether the diagnosis has the native stack of thread `index` (frames, not an empty walk).
bool has_native_stack(const Context& context, size_t index) {
  const std::optional<int64_t> lwp = lwp_of(context, index);
  if (!context.native || !lwp) return false;
  auto stack = context.native->find(*lwp);
  return stack != context.native->end() && !stack->second.frames.empty();
}

// Whether the candidate locks are left unsearched for this thread's futex wait until its native
// stack is read (DiagnosisInput::native_stacks_follow).
bool lock_search_waits_for_native(const Context& context, const PythonThread& thread, bool have_native) {
  return context.native_stacks_follow && !have_native && runs_torch_code(thread);
}

// The lock a thread in futex() waits on, if it is one of the candidates.
const LockState* waited_lock(const Context& context, const PythonThread& thread) {
  if (!thread.native_thread_id) return nullptr;
  auto os_thread = context.os_threads.find(static_cast<int64_t>(*thread.native_thread_id));
  if (os_thread == context.os_threads.end() || os_thread->second->syscall != syscall_numbers::kFutex)
    return nullptr;
  return lock_waited_at(context, os_thread->second->syscall_arguments[0]);
}

// A threading.py wait told apart by its `self`: Event, Barrier, Condition; Semaphore or RLock.
void refine_threading_wait(const Context& context, uint64_t self, BlockedOn& blocked) {
  std::string type = type_name(context, self);
  if (!type.empty() && type[0] == '_') type.erase(0, 1);  // 2.7's _Event, _Condition...
  if (blocked.kind == WaitKind::kCondition) {
    if (type == "Event") blocked.kind = WaitKind::kEvent;
    else if (type == "Barrier") blocked.kind = WaitKind::kBarrier;
  } else if (blocked.kind == WaitKind::kSemaphore && type == "RLock") {
    // 2.7's RLock is Python code: its owner is the attribute __owner (mangled), an ident or None.
    blocked.kind = WaitKind::kRLock;
    if (auto owner = int_attribute(context, self, "_RLock__owner")) {
      blocked.owner = thread_by_ident(context, *owner);
      if (blocked.owner) blocked.owner_lwp = lwp_of(context, *blocked.owner);
    }
    if (auto count = int_attribute(context, self, "_RLock__count"))
      blocked.detail = fmt::format("acquired {} time{}", *count, *count == 1 ? "" : "s");
    if (!blocked.owner) blocked.owner_unknown = true;
  }
  if (!type.empty()) blocked.what = fmt::format("{} 0x{:x}", type, self);
}

BlockedOn stdlib_blocked_on(const Context& context, size_t index, const StdlibWait& wait,
                            const ThreadDiagnosis& diagnosis) {
  const PythonThread& thread = context.stacks.threads[index];
  BlockedOn blocked;
  blocked.kind = wait.kind;
  blocked.what = wait.what;
  const uint64_t self = frame_self(context, thread.frames[wait.frame]);
  if (self) blocked.object = self;
  switch (wait.kind) {
    case WaitKind::kCondition:
    case WaitKind::kSemaphore:
      if (self) refine_threading_wait(context, self, blocked);
      break;
    case WaitKind::kQueue:
    case WaitKind::kProcessQueue:
      if (self) blocked.what = fmt::format("{} 0x{:x} ({})", type_name(context, self), self, wait.what);
      break;
    case WaitKind::kJoin: {
      if (!self) break;
      blocked.what = fmt::format("Thread 0x{:x}", self);
      if (auto ident = int_attribute(context, self, context.layout.major == 2 ? "_Thread__ident" : "_ident")) {
        blocked.owner = thread_by_ident(context, *ident);
        if (blocked.owner) blocked.owner_lwp = lwp_of(context, *blocked.owner);
        else blocked.detail = fmt::format("thread 0x{:x} runs no Python", *ident);
      }
      break;
    }
    case WaitKind::kChildProcess: {
      if (!diagnosis.syscall_arguments_lost && (diagnosis.syscall == syscall_numbers::kWait4 || diagnosis.syscall == syscall_numbers::kWaitid)) {
        // wait4(pid, ...); waitid(idtype, id, ...)
        const uint64_t raw = diagnosis.syscall == syscall_numbers::kWait4 ? diagnosis.syscall_arguments[0]
                                                                          : diagnosis.syscall_arguments[1];
        blocked.child_pid = static_cast<int32_t>(static_cast<uint32_t>(raw));
      } else if (self) {
        if (auto pid = int_attribute(context, self, "pid")) blocked.child_pid = static_cast<int64_t>(*pid);
      }
      blocked.what = blocked.child_pid ? fmt::format("child process {}", *blocked.child_pid)
                                       : std::string("a child process");
      blocked.detail = wait.what;
      // subprocess.Popen's stdout=PIPE / stderr=PIPE: this process holds the read end of the
      // child's fd 1 or 2, and reads nothing while it waits. A core holds no descriptor table;
      // the Popen object says it all the same.
      if (self && wait.what.starts_with("subprocess")) {
        cpython::InstanceAttributes attributes(context.objects);
        for (const auto& [name, fd] : {std::pair<const char*, int64_t>{"stdout", 1}, {"stderr", 2}}) {
          auto stream = attributes.get(self, name);
          if (stream && *stream != 0 && type_name(context, *stream) != "NoneType") blocked.child_pipe_fds.push_back(fd);
        }
      }
      break;
    }
    default:
      break;
  }
  return blocked;
}

// What the system call alone says.
BlockedOn syscall_blocked_on(const ThreadDiagnosis& diagnosis) {
  BlockedOn blocked;
  const auto& args = diagnosis.syscall_arguments;
  const std::string name = diagnosis.syscall_name.empty() ? fmt::format("system call {}", *diagnosis.syscall)
                                                          : diagnosis.syscall_name;
  if (diagnosis.syscall_arguments_lost) {
    blocked.kind = WaitKind::kSyscall;
    blocked.what = fmt::format("{} (its arguments are lost: the call had just returned an error when the core was made)", name);
    return blocked;
  }
  switch (syscall_kind(*diagnosis.syscall)) {
    case SyscallKind::kSleep:
      blocked.kind = WaitKind::kSleep;
      blocked.what = fmt::format("sleep ({})", name);
      break;
    case SyscallKind::kMultiplex:
      // time.sleep before 3.11 is select(0, NULL, NULL, NULL, &timeout), which glibc makes a
      // pselect6 since 2.34.
      if ((*diagnosis.syscall == syscall_numbers::kSelect || *diagnosis.syscall == syscall_numbers::kPselect6) &&
          args[0] == 0 && args[1] == 0) {
        blocked.kind = WaitKind::kSleep;
        blocked.what = "sleep (select with no file descriptors)";
      } else {
        blocked.kind = WaitKind::kMultiplex;
        blocked.what = name;
      }
      break;
    case SyscallKind::kSocket:
      blocked.kind = WaitKind::kSocket;
      blocked.what = fmt::format("socket {} (fd {})", name, static_cast<int32_t>(args[0]));
      break;
    case SyscallKind::kRead:
      blocked.kind = WaitKind::kRead;
      blocked.what = fmt::format("{} of fd {}", name, static_cast<int32_t>(args[0]));
      break;
    case SyscallKind::kWrite:
      blocked.kind = WaitKind::kWrite;
      blocked.what = fmt::format("{} to fd {}", name, static_cast<int32_t>(args[0]));
      break;
    case SyscallKind::kChildWait: {
      blocked.kind = WaitKind::kChildProcess;
      const uint64_t raw = *diagnosis.syscall == syscall_numbers::kWait4 ? args[0] : args[1];
      blocked.child_pid = static_cast<int32_t>(static_cast<uint32_t>(raw));
      blocked.what = fmt::format("child process {}", *blocked.child_pid);
      break;
    }
    case SyscallKind::kFutex:
      blocked.kind = WaitKind::kSyscall;
      blocked.what = fmt::format("futex 0x{:x}", args[0]);
      break;
    case SyscallKind::kOther:
      blocked.kind = WaitKind::kSyscall;
      blocked.what = name;
      break;
  }
  return blocked;
}

BlockedOn pthread_mutex_blocked_on(const Context& context, const ThreadDiagnosis& diagnosis) {
  BlockedOn blocked;
  blocked.kind = WaitKind::kPthreadMutex;
  // __lll_lock_wait futex-waits on the mutex's first word (__data.__lock); glibc keeps the owner's
  // LWP in __data.__owner, 8 bytes in.
  const uint64_t mutex = diagnosis.syscall_arguments[0];
  blocked.object = mutex;
  blocked.what = fmt::format("pthread mutex 0x{:x}", mutex);
  auto owner = cpython::read_value<int32_t>(context.memory, mutex + 8);
  if (owner && *owner > 0) {
    blocked.owner_lwp = *owner;
    blocked.owner = thread_by_lwp(context, *owner);
  } else {
    blocked.owner_unknown = true;
  }
  return blocked;
}

bool waits_for_gil_struct(const Context& context, const ThreadDiagnosis& diagnosis) {
  const cpython::GilLayout& gil = context.layout.gil;
  if (diagnosis.syscall != syscall_numbers::kFutex || !context.stacks.gil_address ||
      gil.wait_begin == kAbsent)
    return false;
  const uint64_t begin = *context.stacks.gil_address + static_cast<uint64_t>(gil.wait_begin);
  const uint64_t end = *context.stacks.gil_address + static_cast<uint64_t>(gil.wait_end);
  const uint64_t address = diagnosis.syscall_arguments[0];
  return address >= begin && address < end;
}

// The function the thread's pc is in, by symbol lookup alone (no native frames at hand).
std::optional<std::string> running_function(const Context& context, const std::optional<int64_t>& lwp) {
  if (!context.function_at || !lwp) return std::nullopt;
  auto os_thread = context.os_threads.find(*lwp);
  if (os_thread == context.os_threads.end() || os_thread->second->pc == 0) return std::nullopt;
  return context.function_at(os_thread->second->pc);
}

// The GIL's holder runs the collections of a GIL build: its interpreter's flag names it.
bool collecting_with_gil(const Context& context, const PythonThread& thread) {
  const cpython::GcLayout& gc = context.layout.gc;
  if (!thread.holds_gil || gc.state == kAbsent || gc.collecting == kAbsent) return false;
  const uint64_t base = gc.in_runtime ? context.stacks.runtime_address : thread.interpreter;
  if (base == 0) return false;
  auto collecting = cpython::read_value<int32_t>(
      context.memory, base + static_cast<uint64_t>(gc.state) + static_cast<uint64_t>(gc.collecting));
  return collecting && *collecting != 0;
}

void diagnose_thread(const Context& context, size_t index, const std::unordered_map<uint64_t, uint64_t>& thread_objects,
                     int64_t pid, ThreadDiagnosis& diagnosis) {
  const PythonThread& thread = context.stacks.threads[index];
  const std::optional<int64_t> lwp = lwp_of(context, index);
  diagnosis.main_thread = lwp && pid != 0 && *lwp == pid;
  diagnosis.registers_known = !context.os_threads.empty();
  if (lwp) {
    const auto found = context.os_threads.find(*lwp);
    if (found != context.os_threads.end() && found->second->syscall >= 0) {
      diagnosis.syscall = found->second->syscall;
      diagnosis.syscall_name = std::string(syscall_name(*diagnosis.syscall));
      diagnosis.syscall_arguments = found->second->syscall_arguments;
      diagnosis.syscall_arguments_lost = found->second->syscall_arguments_lost;
    }
  }
  if (auto object = thread_objects.find(thread.thread_id); object != thread_objects.end()) {
    if (auto daemon = int_attribute(context, object->second, context.layout.locks.daemon_attribute))
      diagnosis.daemon = *daemon != 0;
  }
  NativeHint hint;
  const bool have_native = has_native_stack(context, index);
  if (have_native) hint = read_native_hint(context.native->at(*lwp), context.layout.eval_loop_function);
  diagnosis.in_gc = hint.collecting || collecting_with_gil(context, thread);
  diagnosis.held_locks = context.held[index];

  if (context.stacks.gil_disabled) {
    diagnosis.gil = GilState::kUnknown;
  } else if (thread.holds_gil) {
    diagnosis.gil = GilState::kHolds;
  } else if (hint.takes_gil || waits_for_gil_struct(context, diagnosis)) {
    diagnosis.gil = GilState::kWaits;
  } else if (context.gil_known) {
    diagnosis.gil = GilState::kNeither;
  }

  BlockedOn& blocked = diagnosis.blocked_on;
  if (diagnosis.gil == GilState::kWaits) {
    blocked.kind = WaitKind::kGil;
    blocked.what = "the GIL";
    for (size_t i = 0; i < context.stacks.threads.size(); ++i) {
      if (!context.stacks.threads[i].holds_gil) continue;
      blocked.owner = i;
      blocked.owner_lwp = lwp_of(context, i);
    }
    return;
  }
  if (hint.collective) {
    blocked.kind = WaitKind::kCollective;
    // "DDP's ..." and "a TCPStore ..." say what they are; an op alone needs the words.
    blocked.what = hint.collective->starts_with("DDP") || hint.collective->starts_with("a ")
                       ? *hint.collective
                       : "torch.distributed " + *hint.collective;
    return;
  }
  if (hint.pthread_mutex && diagnosis.syscall == syscall_numbers::kFutex && !diagnosis.syscall_arguments_lost) {
    blocked = pthread_mutex_blocked_on(context, diagnosis);
    return;
  }
  if (auto wait = find_stdlib_wait(thread.frames)) {
    blocked = stdlib_blocked_on(context, index, *wait, diagnosis);
    return;
  }
  if (diagnosis.syscall == syscall_numbers::kFutex && !diagnosis.syscall_arguments_lost) {
    if (lock_search_waits_for_native(context, thread, have_native)) {
      diagnosis.lock_search_deferred = true;
    } else if (const LockState* lock = lock_waited_at(context, diagnosis.syscall_arguments[0])) {
      set_lock_wait(context, *lock, blocked);
      return;
    }
  }
  if (diagnosis.in_gc && !diagnosis.syscall) {
    blocked.kind = WaitKind::kGarbageCollection;
    blocked.what = "garbage collection";
    return;
  }
  if (diagnosis.syscall == syscall_numbers::kFutex && !hint.thread_pool.empty()) {
    blocked = thread_pool_blocked_on(context, hint, diagnosis);
    return;
  }
  if (diagnosis.syscall) {
    blocked = syscall_blocked_on(diagnosis);
    if (!hint.caller_outside_libc.empty() && !hint.innermost_is_python)
      blocked.what += " in " + hint.caller_outside_libc;
    return;
  }
  blocked.kind = WaitKind::kRunning;
  if (have_native && !hint.innermost_is_python && !hint.innermost_symbol.empty()) {
    blocked.what = "running C in " + hint.innermost_symbol;
  } else if (have_native) {
    blocked.what = "running Python";
  } else if (auto function = running_function(context, lwp)) {
    blocked.what = native::is_eval_loop_symbol(*function, context.layout.eval_loop_function)
                       ? std::string("running Python")
                       : "running C in " + *function;
  } else {
    blocked.what = thread.holds_gil ? "running (holds the GIL)" : "running";
  }
}

std::string short_label(const PythonThread& thread) {
  return thread.name ? fmt::format("\"{}\"", *thread.name) : thread_label(thread);
}

std::string cycle_text(const cpython::ProcessStacks& stacks, const ProcessDiagnosis& result,
                       const std::vector<size_t>& cycle) {
  std::string text = "deadlock: " + thread_label(stacks.threads[cycle[0]]);
  if (cycle.size() == 1 && result.threads[cycle[0]].blocked_on.kind == WaitKind::kLock) {
    // Its owner is known only from a `with` of it in one of the thread's outer frames.
    return text + fmt::format(" waits for {}, which it holds itself: a `with` of it in an outer "
                              "frame has not ended, and a Lock is not reentrant",
                              result.threads[cycle[0]].blocked_on.what);
  }
  for (size_t k = 0; k < cycle.size(); ++k) {
    const size_t next = cycle[(k + 1) % cycle.size()];
    const BlockedOn& blocked = result.threads[cycle[k]].blocked_on;
    const PythonThread& owner = stacks.threads[next];
    const std::string owner_text = k + 1 == cycle.size() ? short_label(owner) : thread_label(owner);
    if (k > 0) text += ", which";
    if (blocked.kind == WaitKind::kJoin) {
      text += " waits to join " + owner_text;
    } else {
      text += fmt::format(" waits for {} held by {}", blocked.what, owner_text);
    }
  }
  return text;
}

}  // namespace

namespace {

// The threads that run no Python, by their native stacks; a Python thread waiting in a collective
// says what the backend's worker running it waits for (its words the same in every rank, so that
// the triage's groups stay whole: no LWP in them).
void name_native_roles(const DiagnosisInput& input, ProcessDiagnosis& result) {
  if (input.native == nullptr || !input.stacks->threads_without_python) return;
  std::optional<NativeRole> running;  // the worker running a collective
  int64_t running_lwp = 0;
  for (int64_t lwp : *input.stacks->threads_without_python) {
    auto stack = input.native->find(lwp);
    if (stack == input.native->end() || stack->second.error) continue;
    const std::optional<NativeRole> role = native_role(stack->second);
    if (!role) continue;
    result.native_roles[lwp] = describe_native_role(*role);
    if (role->runs_collective && !running) {
      running = role;
      running_lwp = lwp;
    }
  }
  if (!running) return;
  for (ThreadDiagnosis& thread : result.threads) {
    BlockedOn& blocked = thread.blocked_on;
    if (blocked.kind != WaitKind::kCollective) continue;
    // The Python frames name no backend where c10d's do not: the worker does.
    if (blocked.what.ends_with(" (c10d)"))
      blocked.what.replace(blocked.what.size() - 5, 4, running->backend);
    blocked.worker_lwp = running_lwp;
    blocked.worker_waits = running->waits;
  }
}

}  // namespace

ProcessDiagnosis diagnose(const DiagnosisInput& input) {
  ProcessDiagnosis result;
  if (!input.stacks || !input.memory || !input.stacks->layout) return result;
  const cpython::ProcessStacks& stacks = *input.stacks;
  Context context(stacks, *input.memory, input.native);
  context.function_at = input.function_at;
  // The diagnosis speaks x86-64's system call numbers (syscalls.h): another machine's threads have
  // theirs translated once, here.
  std::vector<cpython::NativeThread> translated;
  translated.reserve(input.os_threads.size());
  for (const cpython::NativeThread& os_thread : input.os_threads) {
    if (os_thread.machine == cpython::Machine::kX86_64) continue;
    translated.push_back(os_thread);
    translated.back().syscall = x86_64_syscall(os_thread.machine, os_thread.syscall);
    translated.back().machine = cpython::Machine::kX86_64;
  }
  for (const cpython::NativeThread& os_thread : input.os_threads)
    if (os_thread.machine == cpython::Machine::kX86_64) context.os_threads[os_thread.lwp] = &os_thread;
  for (const cpython::NativeThread& os_thread : translated) context.os_threads[os_thread.lwp] = &os_thread;
  context.gil_known = stacks.gil_address.has_value() ||
                      std::any_of(stacks.threads.begin(), stacks.threads.end(),
                                  [](const PythonThread& t) { return t.holds_gil; });
  result.no_gil = stacks.gil_disabled;
  context.memo = input.memo;
  context.native_stacks_follow = input.native_stacks_follow;
  const bool held_memo = input.memo != nullptr && input.memo->held_through_with &&
                         input.memo->held_through_with->size() == stacks.threads.size();
  std::vector<std::vector<uint64_t>> held_found;
  for (size_t index = 0; index < stacks.threads.size(); ++index) {
    const PythonThread& thread = stacks.threads[index];
    std::vector<uint64_t> held = held_memo ? (*input.memo->held_through_with)[index] : context.locks.held_through_with(thread);
    if (!held_memo) held_found.push_back(held);
    // The lock a thread is blocked acquiring is not one it holds, though every version pushes
    // the `with`'s __exit__ before calling __enter__ in the frame that acquires it; a `with` of
    // the same lock in an outer frame is the thread's own (a Lock is not reentrant), unless that
    // frame is its parent's, inherited through fork: the lock was then taken before the fork.
    // (With none held there is nothing to take out: the candidates are not read for it.)
    // (A thread whose lock search waits for its native stack is diagnosed again with it.)
    const bool deferred = lock_search_waits_for_native(context, thread, has_native_stack(context, index));
    if (const LockState* waited = held.empty() || deferred ? nullptr : waited_lock(context, thread)) {
      size_t own_frames = thread.frames.size();
      for (size_t f = 0; f < thread.frames.size(); ++f) {
        if (starts_forked_child(thread.frames[f].function, thread.frames[f].file)) {
          own_frames = f + 1;
          break;
        }
      }
      const std::vector<uint64_t> outer = context.locks.held_through_with(thread, 1, own_frames);
      if (std::find(outer.begin(), outer.end(), waited->object) == outer.end())
        std::erase(held, waited->object);
    }
    context.held.push_back(std::move(held));
  }
  if (input.memo != nullptr && !held_memo) input.memo->held_through_with = std::move(held_found);

  // threading's Thread objects, per interpreter (each has its own threading module).
  std::unordered_map<uint64_t, uint64_t>& thread_objects = context.thread_objects;
  if (input.memo != nullptr && input.memo->thread_objects) {
    thread_objects = *input.memo->thread_objects;
  } else if (stacks.thread_objects) {
    thread_objects = *stacks.thread_objects;  // read as the threads were named
  } else {
    std::vector<uint64_t> interpreters;
    for (const PythonThread& thread : stacks.threads)
      if (std::find(interpreters.begin(), interpreters.end(), thread.interpreter) == interpreters.end())
        interpreters.push_back(thread.interpreter);
    for (uint64_t interpreter : interpreters) {
      std::vector<PythonThread> own;
      for (const PythonThread& thread : stacks.threads)
        if (thread.interpreter == interpreter) own.push_back(thread);
      for (const auto& entry : cpython::read_thread_objects(*input.memory, *stacks.layout, interpreter, own))
        thread_objects.insert(entry);
    }
    if (input.memo != nullptr) input.memo->thread_objects = thread_objects;
  }

  result.threads.resize(stacks.threads.size());
  for (size_t i = 0; i < stacks.threads.size(); ++i) {
    diagnose_thread(context, i, thread_objects, input.pid, result.threads[i]);
    name_import_wait(context, i, result.threads[i]);
    name_result_wait(context, i, result.threads[i]);
  }
  for (size_t i = 0; i < stacks.threads.size(); ++i) {
    if (in_exit(stacks.threads[i].frames)) mark_exit_wait(context, result, i);
    name_file_descriptor(input.describe_fd, result.threads[i]);
    name_child_in_namespace(input.namespace_pids, result.threads[i]);
    name_opened_path(context, result.threads[i]);
    result.threads[i].idle = idle_wait(result.threads[i].blocked_on.kind) && waits_for_work(stacks.threads[i].frames);
  }

  name_native_roles(input, result);

  std::vector<std::optional<size_t>> waits_for;
  for (const ThreadDiagnosis& thread : result.threads) waits_for.push_back(thread.blocked_on.owner);
  for (std::vector<size_t>& cycle : find_wait_cycles(waits_for)) {
    WaitCycle found;
    found.text = cycle_text(stacks, result, cycle);
    found.threads = std::move(cycle);
    result.cycles.push_back(std::move(found));
  }
  // A thread pool whose workers all wait for work queued behind them: a cycle through the pool.
  for (WaitCycle& starved : find_starved_pools(context, result)) result.cycles.push_back(std::move(starved));
  result.chains = find_wait_chains(stacks, result);
  return result;
}

bool runs_torch_code(const cpython::PythonThread& thread) {
  return std::any_of(thread.frames.begin(), thread.frames.end(), [](const cpython::PythonFrame& frame) {
    return frame.file.find("/torch/") != std::string::npos;
  });
}

}  // namespace hangpy::diagnosis
