// Whether a live process is still the one an analysis began with (targets/process_identity.h),
// on real child processes: one that exits, one that runs exec.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "targets/process_identity.h"

using namespace hangpy::targets;

namespace {

pid_t start_sleeper() {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

}  // namespace

TEST(ProcessIdentity, TheSameProcessIsNoChange) {
  const pid_t pid = start_sleeper();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past its exec
  const auto identity = process_identity(pid);
  ASSERT_TRUE(identity.has_value());
  EXPECT_FALSE(process_change(pid, identity).has_value());
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST(ProcessIdentity, AnExitIsToldEvenUnreaped) {
  const pid_t pid = start_sleeper();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto identity = process_identity(pid);
  kill(pid, SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a zombie now
  auto change = process_change(pid, identity);
  ASSERT_TRUE(change.has_value());
  EXPECT_NE(change->find("exited during the analysis"), std::string::npos) << *change;
  waitpid(pid, nullptr, 0);
  change = process_change(pid, identity);  // reaped: gone
  ASSERT_TRUE(change.has_value());
  EXPECT_NE(change->find("exited"), std::string::npos);
}

TEST(ProcessIdentity, AnExecIsTold) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    char go = 0;
    close(ready[1]);
    if (read(ready[0], &go, 1) != 1) _exit(1);
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(ready[0]);
  const auto identity = process_identity(pid);  // still this test program
  ASSERT_TRUE(identity.has_value());
  ASSERT_EQ(write(ready[1], "g", 1), 1);
  close(ready[1]);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto change = process_change(pid, identity);
  ASSERT_TRUE(change.has_value());
  EXPECT_NE(change->find("ran exec (now "), std::string::npos) << *change;
  EXPECT_NE(change->find("sleep) during the analysis"), std::string::npos) << *change;
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}
