// Two looks at one process compared (triage/progress.h) and a second look's group lines
// (triage/second_look.h), on documents in the shape of coreanalyze --json with its "look" (the
// time axis); tests/integration/test_watch.py runs the same rules on real processes.
#include <gtest/gtest.h>

#include "triage/merge.h"
#include "triage/progress.h"
#include "triage/second_look.h"

using namespace hangpy::triage;
using nlohmann::json;

namespace {

struct Look {
  double at = 100;
  double cpu = 1.0;
  std::optional<uint64_t> io = 1000;
  int line = 10;
  const char* function = "wait";
  const char* local = "3";
  bool with_look = true;
  int64_t pid = 42;
};

ProcessRecord record(const Look& look) {
  json frames = json::array({
      {{"file", "/job/train.py"}, {"line", 5}, {"function", "main"}, {"qualname", "main"},
       {"locals", json::array({{{"name", "step"}, {"repr", look.local}}})}},
      {{"file", "/job/train.py"}, {"line", look.line}, {"function", look.function}, {"qualname", look.function}},
  });
  json document = {{"process", {{"pid", look.pid}, {"host", "node1"}}},
                   {"threads", json::array({{{"name", "MainThread"}, {"native_thread_id", look.pid},
                                             {"frames", frames}}})}};
  if (look.with_look) {
    json thread = {{"native_thread_id", look.pid}, {"cpu_seconds", look.cpu}};
    thread["io_bytes"] = look.io ? json(*look.io) : json(nullptr);
    document["look"] = {{"unix_time", look.at}, {"threads", json::array({thread})}};
  }
  auto records = records_from_json(document, "test");
  EXPECT_TRUE(records.has_value());
  return records->front();
}

Motion motion_of(const Look& before, const Look& after) {
  return compare_looks(record(before), record(after)).motion;
}

}  // namespace

TEST(Progress, TheSameFramesWithoutCpuOrDataAreStill) {
  Look before, after;
  after.at = 110;
  const ProcessMotion motion = compare_looks(record(before), record(after));
  EXPECT_EQ(motion.motion, Motion::kStill);
  ASSERT_TRUE(motion.seconds.has_value());
  EXPECT_DOUBLE_EQ(*motion.seconds, 10.0);
  ASSERT_EQ(motion.threads.size(), 1u);
  EXPECT_EQ(motion.threads[0].why, "the same frames, 0% of a CPU");
}

TEST(Progress, OtherFunctionsMoved) {
  Look before, after;
  after.at = 110;
  after.function = "step";
  EXPECT_EQ(motion_of(before, after), Motion::kMoved);
}

TEST(Progress, CpuInTheSameFramesIsBusyNotProgressFree) {
  Look before, after;
  after.at = 110;
  after.cpu = before.cpu + 9.5;  // 95% of a CPU
  after.line = 11;               // a spin loop's lines change too: still busy
  const ProcessMotion motion = compare_looks(record(before), record(after));
  EXPECT_EQ(motion.motion, Motion::kBusy);
  EXPECT_EQ(motion.threads[0].why, "95% of a CPU in the same frames");
  // Under the threshold it is not busy: another line at low CPU moved.
  after.cpu = before.cpu + 0.5;
  EXPECT_EQ(motion_of(before, after), Motion::kMoved);
}

TEST(Progress, AChangedLocalOrDataMovedIsProgress) {
  Look before, after;
  after.at = 110;
  after.local = "4";
  const ProcessMotion motion = compare_looks(record(before), record(after));
  EXPECT_EQ(motion.motion, Motion::kMoved);
  EXPECT_EQ(motion.threads[0].why, "in the same frames, but `step` in `main` changed");
  Look reading = before;
  reading.at = 110;
  reading.io = *before.io + 4096;
  EXPECT_EQ(motion_of(before, reading), Motion::kMoved);
}

TEST(Progress, WithoutTimesOnlyFramesAreCompared) {
  Look before, after;
  before.with_look = after.with_look = false;
  const ProcessMotion motion = compare_looks(record(before), record(after));
  EXPECT_EQ(motion.motion, Motion::kStill);
  EXPECT_FALSE(motion.seconds.has_value());
  EXPECT_FALSE(motion.threads[0].cpu_share.has_value());
}

TEST(Progress, ThreadsThatComeOrGoAreMotion) {
  Look before, after;
  after.at = 110;
  ProcessRecord later = record(after);
  later.threads[0].native_thread_id = 43;  // another thread: the first ended, a new one began
  const ProcessMotion motion = compare_looks(record(before), later);
  EXPECT_EQ(motion.motion, Motion::kMoved);
  ASSERT_EQ(motion.threads.size(), 2u);
  EXPECT_EQ(motion.threads[0].motion, Motion::kNew);
  EXPECT_EQ(motion.threads[1].motion, Motion::kGone);
}

TEST(SecondLook, GroupsAreStuckOrSlow) {
  Look stuck_a, stuck_b, slow;
  stuck_b.pid = 43;
  slow.pid = 44;
  slow.function = "compute";
  Triage triage = merge({record(stuck_a), record(stuck_b), record(slow)});
  Look stuck_a2 = stuck_a, stuck_b2 = stuck_b, slow2 = slow;
  stuck_a2.at = stuck_b2.at = slow2.at = 110;
  slow2.local = "9";
  const auto motions = motions_since(triage, {record(stuck_a2), record(stuck_b2), record(slow2)});
  const std::vector<std::string> lines = second_look_lines(triage, motions);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find(": stuck: no Python thread moved in 10 s"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("slow, not stuck"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("`step` in `main` changed"), std::string::npos) << lines[1];
  // A process missing from the second look ended.
  const auto without_slow = motions_since(triage, {record(stuck_a2), record(stuck_b2)});
  EXPECT_NE(second_look_lines(triage, without_slow)[1].find("ended before the second look"), std::string::npos);
}

namespace {

// A process of two threads: MainThread in `acquire` (the same at both looks) and a thread named
// `helper_name` whose line (and so its motion) changes when `helper_moves`.
ProcessRecord two_threads(double at, bool helper_moves, const char* helper_name) {
  auto thread = [](const char* name, int64_t id, const char* function, int line) {
    return json{{"name", name}, {"native_thread_id", id},
                {"frames", json::array({{{"file", "/job/train.py"}, {"line", line}, {"function", function},
                                         {"qualname", function}}})}};
  };
  json document = {{"process", {{"pid", 42}, {"host", "node1"}}},
                   {"threads", json::array({thread("MainThread", 42, "acquire", 7),
                                            thread(helper_name, 43, helper_name, helper_moves ? 30 : 20)})},
                   {"look", {{"unix_time", at},
                             {"threads", json::array({{{"native_thread_id", 42}, {"cpu_seconds", 1.0}, {"io_bytes", 5}},
                                                      {{"native_thread_id", 43}, {"cpu_seconds", 1.0}, {"io_bytes", 5}}})}}}};
  return records_from_json(document, "test")->front();
}

}  // namespace

// A heartbeat that ticks does not make a process whose main thread is deadlocked move.
TEST(Progress, AHelperMovingIsNoProgress) {
  const ProcessMotion motion = compare_looks(two_threads(100, false, "heartbeat"), two_threads(110, true, "heartbeat"));
  EXPECT_EQ(motion.motion, Motion::kStill);
  EXPECT_EQ(helpers_moving_text(motion), "MainThread still; heartbeat moving (a helper: not the job's progress)");
  // A thread not named as a helper is work: its moving is the process's.
  EXPECT_EQ(compare_looks(two_threads(100, false, "loader"), two_threads(110, true, "loader")).motion, Motion::kMoved);
  // --must-move heartbeat: the heartbeat is the progress.
  ProgressRules rules{{"heartbeat"}};
  EXPECT_EQ(compare_looks(two_threads(100, false, "heartbeat"), two_threads(110, true, "heartbeat"), std::nullopt, rules).motion,
            Motion::kMoved);
  rules.must_move = {"main"};
  EXPECT_EQ(compare_looks(two_threads(100, false, "loader"), two_threads(110, true, "loader"), std::nullopt, rules).motion,
            Motion::kStill);
}

// A thread that wanted the CPU (runnable, waiting in the run queue) is busy whatever it got.
TEST(Progress, RunnableOnACrowdedCpuIsBusy) {
  Look before, after;
  after.at = 110;
  after.cpu = before.cpu + 0.6;  // 6% of a CPU
  ProcessRecord first = record(before), second = record(after);
  first.threads[0].run_delay_seconds = 50.0;
  second.threads[0].run_delay_seconds = 58.9;  // 89% of the interval in the run queue
  const ProcessMotion motion = compare_looks(first, second);
  EXPECT_EQ(motion.motion, Motion::kBusy);
  EXPECT_EQ(motion.threads[0].why, "runnable 95% of the interval, on the CPU 6%, in the same frames");
  // Asleep (no run-queue time, state S): still.
  second.threads[0].run_delay_seconds = 50.0;
  EXPECT_EQ(compare_looks(first, second).motion, Motion::kStill);
  // In state R at both looks, no schedstat: busy.
  first.threads[0].run_delay_seconds.reset();
  first.threads[0].run_state = second.threads[0].run_state = 'R';
  EXPECT_EQ(compare_looks(first, second).motion, Motion::kBusy);
}

// A parent still while its child moves waits for moving children, and so does the grandparent
// over it (torchrun's agent over a rank whose DataLoader workers move); a stranger does not.
TEST(Progress, ParentsOfMovingChildrenWait) {
  auto process = [](int64_t pid, int64_t ppid) {
    json document = {{"process", {{"pid", pid}, {"ppid", ppid}, {"host", "node1"}}}, {"threads", json::array()}};
    return records_from_json(document, "test")->front();
  };
  const ProcessRecord agent = process(10, 1), rank = process(11, 10), worker = process(12, 11), other = process(13, 1);
  ProcessMotion still_agent, still_rank, moving_worker, still_other;
  moving_worker.motion = Motion::kMoved;
  note_moving_children({&worker, &other, &rank, &agent}, {&moving_worker, &still_other, &still_rank, &still_agent});
  EXPECT_EQ(still_rank.moving_children, std::vector<int64_t>{12});
  EXPECT_EQ(still_agent.moving_children, std::vector<int64_t>{11});
  EXPECT_TRUE(still_other.moving_children.empty());
  EXPECT_TRUE(moving_worker.moving_children.empty());
}
