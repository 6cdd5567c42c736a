// blocked_threads.h on a real thread of this test process: asleep in read(2) on a pipe it is
// found in its call without being stopped, stays "still blocked" while nothing happens, and is
// seen to have moved once it was woken and ran.
#include "targets/blocked_threads.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

namespace hangpy::targets {
namespace {

TEST(ParseSyscallLine, ACallWithItsArgumentsSpAndPc) {
  auto thread = parse_syscall_line("0 0x3 0x7ffd1000 0x64 0x0 0x0 0x0 0x7ffd0ff0 0x7f00deadbeef\n", 42);
  EXPECT_EQ(thread.lwp, 42);
  EXPECT_EQ(thread.syscall, 0);
  EXPECT_EQ(thread.syscall_arguments[0], 3u);
  EXPECT_EQ(thread.syscall_arguments[2], 0x64u);
  EXPECT_EQ(thread.sp, 0x7ffd0ff0u);
  EXPECT_EQ(thread.pc, 0x7f00deadbeefu);
}

TEST(ParseSyscallLine, OutsideACallOrRunningOrGarbage) {
  auto outside = parse_syscall_line("-1 0x7ffd0ff0 0x401000", 7);
  EXPECT_EQ(outside.syscall, -1);
  EXPECT_EQ(outside.sp, 0x7ffd0ff0u);
  EXPECT_EQ(outside.pc, 0x401000u);
  auto running = parse_syscall_line("running", 7);
  EXPECT_EQ(running.syscall, -1);
  EXPECT_EQ(running.pc, 0u);
  auto bad = parse_syscall_line("0 0x3 zz 0x1", 7);
  EXPECT_EQ(bad.syscall, -1);
  EXPECT_EQ(bad.sp, 0u);
}

TEST(BlockedThreads, AThreadAsleepInReadIsFoundAndSeenToMoveWhenWoken) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<pid_t> tid{0};
  std::thread reader([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    char byte;
    [[maybe_unused]] ssize_t got = read(fds[0], &byte, 1);
  });
  // Until the reader sleeps in read(2).
  std::optional<BlockedThread> blocked;
  for (int i = 0; i < 500 && !blocked; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (tid != 0) blocked = blocked_in_syscall(getpid(), tid);
  }
  ASSERT_TRUE(blocked.has_value());
  EXPECT_EQ(blocked->registers.syscall, SYS_read);
  EXPECT_EQ(blocked->registers.syscall_arguments[0], static_cast<uint64_t>(fds[0]));
  EXPECT_NE(blocked->registers.sp, 0u);
  EXPECT_TRUE(still_blocked(getpid(), *blocked));
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  reader.join();
  EXPECT_FALSE(still_blocked(getpid(), *blocked));  // gone: its files are no more
  close(fds[0]);
  close(fds[1]);
}

TEST(BlockedThreads, AThreadThatWokeAndSleptAgainInTheSameCallHasMoved) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<pid_t> tid{0};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    char byte;
    for (int i = 0; i < 2; ++i) {  // the same read(2), from the same place, twice
      if (read(fds[0], &byte, 1) != 1) return;
      ++reads;
    }
  });
  std::optional<BlockedThread> blocked;
  for (int i = 0; i < 500 && !blocked; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (tid != 0) blocked = blocked_in_syscall(getpid(), tid);
  }
  ASSERT_TRUE(blocked.has_value());
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  // Until it sleeps in its second read.
  std::optional<BlockedThread> again;
  for (int i = 0; i < 500 && !(reads == 1 && again); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    again = blocked_in_syscall(getpid(), tid);
  }
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->syscall_line, blocked->syscall_line);  // /proc shows the very same call
  EXPECT_FALSE(still_blocked(getpid(), *blocked));        // yet it ran in between
  EXPECT_TRUE(still_blocked(getpid(), *again));
  ASSERT_EQ(write(fds[1], "y", 1), 1);
  reader.join();
  close(fds[0]);
  close(fds[1]);
}

TEST(BlockedThreads, ARunningThreadIsNotBlocked) {
  std::atomic<bool> stop{false};
  std::atomic<pid_t> tid{0};
  std::thread spinner([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    while (!stop) {
    }
  });
  while (tid == 0) std::this_thread::yield();
  EXPECT_FALSE(blocked_in_syscall(getpid(), tid).has_value());
  stop = true;
  spinner.join();
}

}  // namespace
}  // namespace hangpy::targets
