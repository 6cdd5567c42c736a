// The pure parts of the diagnosis: the syscall table, the wait-for cycle finder, and what frame
// names say. Native frame names are the ones libdwfl gave for real cores (Debian 3.11 and glibc
// 2.36: a ctypes pthread_mutex_lock waiter, a take_gil waiter); the c10d/gloo names are
// libtorch's mangled symbols for ProcessGroupGloo::allreduce and gloo's transport.
#include <fstream>
#include <gtest/gtest.h>

#include "diagnosis/classify.h"
#include "diagnosis/syscalls.h"
#include "diagnosis/task_waits.h"
#include "base/wait_graph.h"

using namespace hangpy;
using namespace hangpy::diagnosis;

namespace {

native::MergedStack native_stack(std::initializer_list<const char*> symbols) {
  native::MergedStack stack;
  for (const char* symbol : symbols) {
    native::NativeFrame frame;
    frame.symbol = symbol;
    frame.module = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    stack.frames.push_back(native::MergedFrame{frame, std::nullopt});
  }
  return stack;
}

cpython::PythonFrame python_frame(const char* file, const char* function) {
  cpython::PythonFrame frame;
  frame.file = file;
  frame.function = function;
  frame.qualname = function;
  return frame;
}

}  // namespace

TEST(Syscalls, NamesFromTheX8664Table) {
  EXPECT_EQ(syscall_name(202), "futex");
  EXPECT_EQ(syscall_name(61), "wait4");
  EXPECT_EQ(syscall_name(230), "clock_nanosleep");
  EXPECT_EQ(syscall_name(232), "epoll_wait");
  EXPECT_EQ(syscall_name(7), "poll");
  EXPECT_EQ(syscall_name(0), "read");
  EXPECT_EQ(syscall_name(-1), "");  // not in a system call
  EXPECT_EQ(syscall_name(100000), "");
}

// Every call the kernel's header names, not only those the kinds table holds.
TEST(Syscalls, EveryCallOfTheKernelsHeaderByName) {
  if (!std::ifstream("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")) GTEST_SKIP() << "no linux-libc-dev header";
  EXPECT_EQ(syscall_name(219), "restart_syscall");
  EXPECT_EQ(syscall_name(39), "getpid");
  EXPECT_EQ(syscall_name(435), "clone3");
  EXPECT_EQ(syscall_kind(219), SyscallKind::kOther);
}

TEST(Syscalls, KindsOfWaiting) {
  EXPECT_EQ(syscall_kind(syscall_numbers::kFutex), SyscallKind::kFutex);
  EXPECT_EQ(syscall_kind(syscall_numbers::kClockNanosleep), SyscallKind::kSleep);
  EXPECT_EQ(syscall_kind(syscall_numbers::kSelect), SyscallKind::kMultiplex);
  EXPECT_EQ(syscall_kind(syscall_numbers::kEpollPwait), SyscallKind::kMultiplex);
  EXPECT_EQ(syscall_kind(syscall_numbers::kRecvfrom), SyscallKind::kSocket);
  EXPECT_EQ(syscall_kind(syscall_numbers::kWait4), SyscallKind::kChildWait);
  EXPECT_EQ(syscall_kind(-1), SyscallKind::kOther);
}

TEST(WaitCycles, TwoThreadsWaitingForEachOther) {
  // 0 joins 1; 1 and 2 wait for each other's lock; 3 waits for nothing.
  auto cycles = find_wait_cycles({1, 2, 1, std::nullopt});
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0], (std::vector<size_t>{1, 2}));
}

TEST(WaitCycles, EachCycleOnceFromItsSmallestThread) {
  auto cycles = find_wait_cycles({3, 0, 4, 1, 2, 5});
  ASSERT_EQ(cycles.size(), 3u);
  EXPECT_EQ(cycles[0], (std::vector<size_t>{0, 3, 1}));
  EXPECT_EQ(cycles[1], (std::vector<size_t>{2, 4}));
  EXPECT_EQ(cycles[2], (std::vector<size_t>{5}));  // waits for itself (a non-reentrant relock)
}

TEST(WaitCycles, NoCycleAndOwnersOutOfRange) {
  EXPECT_TRUE(find_wait_cycles({1, 2, std::nullopt}).empty());
  EXPECT_TRUE(find_wait_cycles({7, 0}).empty());
  EXPECT_TRUE(find_wait_cycles(std::vector<std::optional<size_t>>{}).empty());
}

TEST(WaitCycles, NodesThatWaitForSeveralAsAGatherDoes) {
  // 0 gathers 1 and 2; 2 awaits 0 (a cycle through the gather); 1 waits for 3, which waits for 1.
  std::vector<std::vector<size_t>> edges{{1, 2}, {3}, {0}, {1}, {9}};
  auto cycles = find_wait_cycles(edges);
  ASSERT_EQ(cycles.size(), 2u);
  EXPECT_EQ(cycles[0], (std::vector<size_t>{0, 2}));
  EXPECT_EQ(cycles[1], (std::vector<size_t>{1, 3}));
}

TEST(WaitCycles, ARingLongerThanTheBoundIsNotFollowed) {
  std::vector<std::vector<size_t>> ring(kMaxCycleLength + 1);
  for (size_t i = 0; i < ring.size(); ++i) ring[i] = {(i + 1) % ring.size()};
  EXPECT_TRUE(find_wait_cycles(ring).empty());
  ring.pop_back();
  ring.back() = {0};
  EXPECT_EQ(find_wait_cycles(ring).size(), 1u);
}

TEST(TaskWaits, ALockHeldByTheTaskThatAwaitsItsWaiterIsACycle) {
  cpython::AsyncioTasks tasks;
  tasks.imported = true;
  cpython::AsyncTask holder;
  holder.address = 0x2000;
  holder.name = "lock-holder";
  holder.awaited = cpython::Awaited{};
  holder.awaited->object = 0x1000;
  holder.awaited->is_task = true;
  holder.awaited->task_name = "Task at 0x1000";
  cpython::AsyncTask waiter;
  waiter.address = 0x1000;
  waiter.name = "lock-waiter";
  waiter.awaited = cpython::Awaited{};
  waiter.awaited->object = 0x3000;
  waiter.awaited->type = "_asyncio.Future";
  waiter.awaited->site = cpython::AwaitSite::kLocks;
  waiter.awaited->self_type = "Lock";
  waiter.awaited->lock_holders = {0x2000};
  tasks.tasks = {holder, waiter};
  const TaskForest forest = diagnose_tasks(tasks);
  ASSERT_EQ(forest.waits.size(), 2u);
  EXPECT_EQ(forest.waits[0].kind, WaitKind::kTask);
  EXPECT_EQ(forest.waits[0].detail, "lock-waiter");  // named as listed
  EXPECT_EQ(forest.waits[1].kind, WaitKind::kLock);
  EXPECT_EQ(forest.waits[1].detail, "asyncio.Lock held by lock-holder");
  EXPECT_EQ(forest.waits[1].awaited_by, (std::vector<uint64_t>{0x2000}));
  EXPECT_TRUE(forest.waits[0].awaited_by.empty());  // waiting for a lock's holder is no await of it
  ASSERT_EQ(forest.cycles.size(), 1u);
  EXPECT_EQ(forest.cycles[0], (std::vector<uint64_t>{0x1000, 0x2000}));
}

TEST(TaskWaits, SleepsQueuesAndPlainFuturesInTheSharedVocabulary) {
  cpython::AsyncioTasks tasks;
  cpython::AsyncTask sleeper, getter, other, idle;
  sleeper.address = 1;
  sleeper.awaited = cpython::Awaited{};
  sleeper.awaited->site = cpython::AwaitSite::kSleep;
  sleeper.awaited->sleep_delay = "3600";
  sleeper.awaited->sleep_due_in = 42.4;
  getter.address = 2;
  getter.awaited = cpython::Awaited{};
  getter.awaited->site = cpython::AwaitSite::kQueues;
  getter.awaited->self_type = "Queue";
  getter.awaited->site_function = "get";
  other.address = 3;
  other.awaited = cpython::Awaited{};
  other.awaited->type = "Thing";
  other.awaited->callbacks = 1;
  idle.address = 4;
  tasks.tasks = {sleeper, getter, other, idle};
  const TaskForest forest = diagnose_tasks(tasks);
  EXPECT_EQ(forest.waits[0].kind, WaitKind::kSleep);
  EXPECT_EQ(forest.waits[0].detail, "asyncio.sleep(3600), due in 42 s");
  EXPECT_EQ(forest.waits[1].kind, WaitKind::kQueue);
  EXPECT_EQ(forest.waits[1].detail, "asyncio.Queue.get");
  EXPECT_EQ(forest.waits[2].kind, WaitKind::kOther);
  EXPECT_EQ(forest.waits[2].detail, "Future pending, 1 callback (Thing)");
  EXPECT_STREQ(wait_kind_name(*forest.waits[2].kind), "other");
  EXPECT_FALSE(forest.waits[3].kind.has_value());
  EXPECT_TRUE(forest.cycles.empty());
}

TEST(NativeNames, ClonesAndGlibcAliases) {
  EXPECT_TRUE(is_symbol_or_clone("take_gil", "take_gil"));
  EXPECT_TRUE(is_symbol_or_clone("take_gil.lto_priv.0", "take_gil"));
  EXPECT_FALSE(is_symbol_or_clone("take_gil_slowly", "take_gil"));
  EXPECT_TRUE(is_symbol_or_clone("__GI___lll_lock_wait", "__lll_lock_wait"));
  EXPECT_TRUE(is_symbol_or_clone("__pthread_mutex_lock@GLIBC_2.2.5", "__pthread_mutex_lock"));
}

TEST(NativeHints, PthreadMutexWaiterThroughCtypes) {
  NativeHint hint = read_native_hint(
      native_stack({"__GI___lll_lock_wait", "__pthread_mutex_lock@GLIBC_2.2.5", "", "", "ffi_call",
                    "_ctypes_callproc.cold", "PyCFuncPtr_call.cold", "_PyObject_MakeTpCall",
                    "_PyEval_EvalFrameDefault"}),
      "_PyEval_EvalFrameDefault");
  EXPECT_TRUE(hint.pthread_mutex);
  EXPECT_FALSE(hint.takes_gil);
  EXPECT_EQ(hint.innermost_symbol, "__GI___lll_lock_wait");
  EXPECT_FALSE(hint.innermost_is_python);
}

TEST(NativeHints, GilWaiterAndRunningPython) {
  NativeHint waiter = read_native_hint(
      native_stack({"__futex_abstimed_wait_common", "__pthread_cond_timedwait64",
                    "take_gil.lto_priv.0", "PyEval_RestoreThread", "_PyEval_EvalFrameDefault"}),
      "_PyEval_EvalFrameDefault");
  EXPECT_TRUE(waiter.takes_gil);
  NativeHint running = read_native_hint(native_stack({"_PyEval_EvalFrameDefault.lto_priv.0"}),
                                        "_PyEval_EvalFrameDefault");
  EXPECT_TRUE(running.innermost_is_python);
}

TEST(NativeHints, CollectiveNamedByTheOutermostC10dFrame) {
  NativeHint hint = read_native_hint(
      native_stack({"__futex_abstimed_wait_common",
                    "_ZN4gloo9transport3tcp4Pair4recvEv",
                    "_ZN4gloo13AllreduceRingIfE3runEv",
                    "_ZN4c10d16ProcessGroupGloo9allreduceERSt6vectorIN2at6TensorESaIS3_EERKNS_16AllreduceOptionsE",
                    "_PyEval_EvalFrameDefault"}),
      "_PyEval_EvalFrameDefault");
  ASSERT_TRUE(hint.collective.has_value());
  EXPECT_EQ(*hint.collective, "allreduce (gloo)");
}

// DDP's backward waits in the reducer for the gradients' all_reduce (a real rank 0 of a gloo
// job whose rank 1 had one batch fewer: torch 1.13's frames, as the unwinder names them).
TEST(NativeHints, DdpBackwardWaitsInTheReducer) {
  NativeHint hint = read_native_hint(
      native_stack({"__futex_abstimed_wait_common", "pthread_cond_wait@@GLIBC_2.3.2",
                    "c10d::Reducer::finalize_backward()",
                    "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
                    "THPEngine_run_backward(_object*, _object*, _object*)", "_PyEval_EvalFrameDefault"}),
      "_PyEval_EvalFrameDefault");
  ASSERT_TRUE(hint.collective.has_value());
  EXPECT_EQ(*hint.collective, "DDP's gradient all_reduce in backward() (c10d)");
  // The symbol table's own (mangled) name says the same.
  NativeHint mangled = read_native_hint(
      native_stack({"__futex_abstimed_wait_common", "_ZN4c10d7Reducer17finalize_backwardEv", "_PyEval_EvalFrameDefault"}),
      "_PyEval_EvalFrameDefault");
  EXPECT_EQ(mangled.collective.value_or(""), "DDP's gradient all_reduce in backward() (c10d)");
}

// A stripped libgomp, as Debian ships it: the pool is told by the module, not by a symbol.
TEST(NativeHints, AThreadPoolByItsLibrary) {
  native::MergedStack stack = native_stack({"__futex_abstimed_wait_common", "", "", "_PyEval_EvalFrameDefault"});
  stack.frames[1].native->module = "/lib/x86_64-linux-gnu/libgomp.so.1.0.0";
  stack.frames[2].native->module = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13";
  EXPECT_EQ(read_native_hint(stack, "_PyEval_EvalFrameDefault").thread_pool, "OpenMP (libgomp)");
  stack.frames[1].native->module = "/usr/lib/x86_64-linux-gnu/libopenblas.so.0";
  EXPECT_EQ(read_native_hint(stack, "_PyEval_EvalFrameDefault").thread_pool, "OpenBLAS");
  stack.frames[1].native->module = "/usr/lib/x86_64-linux-gnu/libm.so.6";
  EXPECT_EQ(read_native_hint(stack, "_PyEval_EvalFrameDefault").thread_pool, "");
}

TEST(NativeHints, GarbageCollection) {
  EXPECT_TRUE(read_native_hint(native_stack({"visit_decref", "gc_collect_main.lto_priv.0"}),
                               "_PyEval_EvalFrameDefault").collecting);
}

TEST(StdlibWaits, OutermostOfTheStandardLibraryRun) {
  // queue.Queue.get waiting in Condition.wait: the queue names the wait.
  std::vector<cpython::PythonFrame> frames = {
      python_frame("/usr/lib/python3.11/threading.py", "wait"),
      python_frame("/usr/lib/python3.11/queue.py", "get"),
      python_frame("/srv/worker.py", "consume")};
  auto wait = find_stdlib_wait(frames);
  ASSERT_TRUE(wait.has_value());
  EXPECT_EQ(wait->kind, WaitKind::kQueue);
  EXPECT_EQ(wait->frame, 1u);
}

TEST(StdlibWaits, JoinAndNothing) {
  auto join = find_stdlib_wait({python_frame("/usr/lib/python3.11/threading.py", "_wait_for_tstate_lock"),
                                python_frame("/usr/lib/python3.11/threading.py", "join"),
                                python_frame("/srv/main.py", "main")});
  ASSERT_TRUE(join.has_value());
  EXPECT_EQ(join->kind, WaitKind::kJoin);
  // A user's function on top: the standard library does not say what it waits for.
  EXPECT_FALSE(find_stdlib_wait({python_frame("/srv/job.py", "take_a_then_b"),
                                 python_frame("/usr/lib/python3.11/threading.py", "run")}));
}

TEST(StdlibWaits, TorchCollectiveByItsPythonCall) {
  // A gloo rank blocked in c10d::Work::wait under dist.all_reduce (Debian's python3-torch 1.13).
  auto wait = find_stdlib_wait(
      {python_frame("/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", "all_reduce"),
       python_frame("/srv/train.py", "train")});
  ASSERT_TRUE(wait.has_value());
  EXPECT_EQ(wait->kind, WaitKind::kCollective);
  EXPECT_EQ(wait->what, "torch.distributed.all_reduce");
}
