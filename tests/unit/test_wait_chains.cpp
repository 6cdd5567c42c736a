// Where the waits between a process's threads end (diagnosis/wait_ends.h), on recorded facts:
// the owners each thread's wait was found to have, as diagnose() records them for real processes
// (tests/integration/test_diagnosis.py checks the same chains on real cores).
#include <gtest/gtest.h>

#include "diagnosis/wait_ends.h"

using namespace hangpy;
using namespace hangpy::diagnosis;

namespace {

struct Process {
  cpython::ProcessStacks stacks;
  ProcessDiagnosis diagnosis;

  // A thread named `name` (LWP 100 + its index) stopped at `file`:`line` in `function`.
  size_t add(const char* name, const char* function = "run", const char* file = "/app/job.py", int line = 10) {
    cpython::PythonThread thread;
    thread.name = name;
    thread.native_thread_id = 100 + stacks.threads.size();
    thread.thread_id = 0x7000 + stacks.threads.size();
    cpython::PythonFrame frame;
    frame.function = frame.qualname = function;
    frame.file = file;
    frame.line = line;
    thread.frames.push_back(frame);
    stacks.threads.push_back(thread);
    diagnosis.threads.emplace_back();
    return stacks.threads.size() - 1;
  }
  void waits(size_t thread, size_t owner, WaitKind kind = WaitKind::kLock) {
    BlockedOn& blocked = diagnosis.threads[thread].blocked_on;
    blocked.kind = kind;
    blocked.what = kind == WaitKind::kJoin ? "Thread" : "Lock 0x1000";
    blocked.owner = owner;
    blocked.owner_lwp = static_cast<int64_t>(100 + owner);
  }
  std::vector<WaitChain> chains() const { return find_wait_chains(stacks, diagnosis); }
};

}  // namespace

TEST(WaitChains, FollowsOwnersToTheThreadThatRuns) {
  Process p;
  const size_t main = p.add("MainThread", "main", "/app/job.py", 40);
  const size_t worker = p.add("worker");
  const size_t cruncher = p.add("cruncher", "crunch", "/app/math.py", 7);
  p.waits(main, worker, WaitKind::kJoin);
  p.waits(worker, cruncher);
  p.diagnosis.threads[cruncher].blocked_on.kind = WaitKind::kRunning;
  const auto chains = p.chains();
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chains[0].starts, std::vector<size_t>{main});
  EXPECT_EQ(chains[0].threads, (std::vector<size_t>{worker, cruncher}));
  EXPECT_FALSE(chains[0].ends_outside);
  EXPECT_EQ(chains[0].text,
            "wait chain: thread \"MainThread\" (LWP 100) waits for Thread.join of thread \"worker\" "
            "(LWP 101), which waits for Lock 0x1000 held by thread \"cruncher\" (LWP 102), which runs "
            "in `crunch` at math.py:7");
}

TEST(WaitChains, ThreadsWaitingTheSameWayAreOneLine) {
  Process p;
  const size_t holder = p.add("holder", "sleepy", "/app/job.py", 3);
  p.diagnosis.threads[holder].blocked_on.kind = WaitKind::kSleep;
  p.diagnosis.threads[holder].blocked_on.what = "sleep (clock_nanosleep)";
  std::vector<size_t> waiters;
  for (const char* name : {"w1", "w2", "w3", "w4", "w5"}) {
    waiters.push_back(p.add(name));
    p.waits(waiters.back(), holder);
  }
  const auto chains = p.chains();
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chains[0].starts, waiters);
  EXPECT_TRUE(chains[0].text.starts_with(
      "wait chain: thread \"w1\" (LWP 101), thread \"w2\" (LWP 102), thread \"w3\" (LWP 103) and 2 "
      "more threads wait for Lock 0x1000 held by thread \"holder\" (LWP 100)"))
      << chains[0].text;
  EXPECT_NE(chains[0].text.find("which waits for sleep (clock_nanosleep) in `sleepy` at job.py:3"),
            std::string::npos);
}

TEST(WaitChains, NoChainThroughACycleOrFromAnIdleWorker) {
  Process p;
  const size_t a = p.add("a");
  const size_t b = p.add("b");
  const size_t main = p.add("MainThread");
  const size_t idle = p.add("pool_0");
  p.waits(a, b);
  p.waits(b, a);
  p.waits(main, a, WaitKind::kJoin);  // ends in the cycle: the cycle's own line says it
  p.diagnosis.cycles.push_back(WaitCycle{{a, b}, "deadlock: ..."});
  p.waits(idle, main);
  p.diagnosis.threads[idle].idle = true;  // waits for work: no hang to follow
  EXPECT_TRUE(p.chains().empty());
}

TEST(WaitChains, AWaitOutsideTheThreadsIsAChainOfItsOwn) {
  Process p;
  const size_t main = p.add("MainThread", "join", "/usr/lib/python3.11/multiprocessing/process.py", 149);
  p.stacks.threads[main].frames.push_back(p.stacks.threads[main].frames[0]);
  p.stacks.threads[main].frames[1].function = p.stacks.threads[main].frames[1].qualname = "main";
  p.stacks.threads[main].frames[1].file = "/app/parent.py";
  p.stacks.threads[main].frames[1].line = 9;
  BlockedOn& blocked = p.diagnosis.threads[main].blocked_on;
  blocked.kind = WaitKind::kChildProcess;
  blocked.what = "child process 4242";
  blocked.child_pid = 4242;
  const size_t sleeper = p.add("sleeper");  // waits for nobody, nobody waits for it: no chain
  p.diagnosis.threads[sleeper].blocked_on.kind = WaitKind::kSleep;
  const auto chains = p.chains();
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_TRUE(chains[0].ends_outside);
  EXPECT_TRUE(chains[0].threads.empty());
  EXPECT_EQ(chains[0].text,
            "wait chain: thread \"MainThread\" (LWP 100) in `join` at parent.py:9 waits for child "
            "process 4242");
}
