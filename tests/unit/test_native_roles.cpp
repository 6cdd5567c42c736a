// The roles of threads that run no Python, from their native frames (diagnosis/native_roles.h).
// The frames are those of a rank of tests/programs/job_ddp_uneven.py (torch 1.13's libtorch_cpu
// and libgloo, Debian 12) as libdwfl unwound them from a gcore, innermost first.
#include <gtest/gtest.h>

#include "diagnosis/native_roles.h"

using namespace hangpy;

namespace {

native::MergedStack stack_of(std::initializer_list<std::pair<const char*, const char*>> frames) {
  native::MergedStack stack;
  stack.lwp = 10359;
  for (const auto& [symbol, module] : frames) {
    native::NativeFrame frame;
    frame.symbol = symbol;
    frame.module = module;
    stack.frames.push_back(native::MergedFrame{frame, std::nullopt});
  }
  return stack;
}

constexpr const char* kLibc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
constexpr const char* kGloo = "/usr/lib/libgloo.so.0.5.0";
constexpr const char* kTorch = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0";

}  // namespace

TEST(NativeRoles, GlooWorkerRunningACollectiveSaysWhatItWaitsFor) {
  const auto role = diagnosis::native_role(stack_of({
      {"__futex_abstimed_wait_common", kLibc},
      {"pthread_cond_clockwait@GLIBC_2.30", kLibc},
      {"_ZN4gloo9transport3tcp13UnboundBuffer8waitSendEPiNSt6chrono8durationIlSt5ratioILl1ELl1000EEEE", kGloo},
      {"", kGloo},
      {"", kTorch},
      {"_ZN4c10d16ProcessGroupGloo9AsyncWork7executeEN3c1013intrusive_ptrIS1_NS2_6detail34intrusive_target_default_null_typeIS1_EEEE", kTorch},
      {"_ZN4c10d16ProcessGroupGloo7runLoopEi", kTorch},
      {"start_thread", kLibc},
  }));
  ASSERT_TRUE(role.has_value());
  EXPECT_TRUE(role->runs_collective);
  EXPECT_EQ(role->backend, "gloo");
  EXPECT_EQ(diagnosis::describe_native_role(*role),
            "a gloo worker of the process group, running a collective: waits for a peer to receive what it sends");
}

TEST(NativeRoles, IdleGlooWorkerAndNetworkLoop) {
  const auto idle = diagnosis::native_role(stack_of({
      {"__futex_abstimed_wait_common", kLibc},
      {"pthread_cond_wait@@GLIBC_2.3.2", kLibc},
      {"c10d::ProcessGroupGloo::runLoop(int)", kTorch},  // demangled names read the same
  }));
  ASSERT_TRUE(idle.has_value());
  EXPECT_FALSE(idle->runs_collective);
  EXPECT_EQ(idle->role, "a gloo worker of the process group, idle (no collective queued)");
  const auto loop = diagnosis::native_role(stack_of({{"epoll_wait", kLibc}, {"_ZN4gloo9transport3tcp4Loop3runEv", kGloo}}));
  ASSERT_TRUE(loop.has_value());
  EXPECT_EQ(loop->role, "gloo's network event loop");
}

TEST(NativeRoles, UnknownThreadsHaveNone) {
  EXPECT_FALSE(diagnosis::native_role(stack_of({{"__poll", kLibc}, {"", kTorch}, {"start_thread", kLibc}})).has_value());
  const auto pool = diagnosis::native_role(stack_of({{"", "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0"}}));
  ASSERT_TRUE(pool.has_value());
  EXPECT_EQ(pool->role, "an OpenMP (libgomp) pool worker");
}
