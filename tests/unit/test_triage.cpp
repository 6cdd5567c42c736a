// The triage's merge (issue 11): rank sets, the prefix tree, folding, classes and the verdict,
// and what its renderers make of them. The documents are built in the shape of coreanalyze
// --json (docs/json-schema.md) with the fields the merge reads; tests/integration/test_triage.py
// runs the same merge on documents of real processes.
#include <gtest/gtest.h>

#include "report/triage_dot.h"
#include "report/triage_html.h"
#include "report/triage_json.h"
#include "report/triage_text.h"
#include "triage/merge.h"
#include "triage/place.h"
#include "triage/rank_set.h"
#include "triage/verdict.h"

using namespace hangpy;
using namespace hangpy::triage;
using nlohmann::json;

namespace {

struct F {
  const char* file;
  int line;
  const char* function;
};

json frames_json(std::initializer_list<F> frames) {
  json list = json::array();
  for (const F& f : frames) list.push_back({{"file", f.file}, {"line", f.line}, {"function", f.function}, {"qualname", f.function}});
  return list;
}

json thread_json(const char* name, int64_t lwp, bool main, std::initializer_list<F> frames,
                 const char* blocked_kind = nullptr, const char* blocked_description = nullptr) {
  json thread = {{"name", name}, {"native_thread_id", lwp}, {"frames", frames_json(frames)},
                 {"state", {{"main_thread", main}}}};
  if (blocked_kind) thread["blocked_on"] = {{"kind", blocked_kind}, {"description", blocked_description}};
  return thread;
}

// Ranks 0..n-1 of a training loop; the ranks in `odd` are in barrier() instead of all_reduce(),
// every rank has two pool threads alike.
std::vector<ProcessRecord> job(int n, std::vector<int> odd, bool with_ranks = true) {
  std::vector<ProcessRecord> records;
  for (int rank = 0; rank < n; ++rank) {
    const int64_t pid = 1000 + rank;
    const bool is_odd = std::find(odd.begin(), odd.end(), rank) != odd.end();
    json main = is_odd ? thread_json("MainThread", pid, true,
                                     {{"/job/train.py", 130, "<module>"}, {"/job/train.py", 120, "train"},
                                      {"/usr/lib/python3.11/threading.py", 320, "Condition.wait"}},
                                     "event", "Event 0x7f0000000010")
                       : thread_json("MainThread", pid, true,
                                     {{"/job/train.py", 130, "<module>"}, {"/job/train.py", 88, "train"},
                                      {"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 2050, "all_reduce"}});
    json pool = thread_json("pool", 0, false,
                            {{"/usr/lib/python3.11/threading.py", 995, "Thread._bootstrap"},
                             {"/job/train.py", 40, "pool_worker"}});
    json threads = json::array({main, pool, pool});
    threads[1]["native_thread_id"] = pid + 1;
    threads[2]["native_thread_id"] = pid + 2;
    json process = {{"pid", pid}};
    if (with_ranks) process["labels"] = {{"rank", rank}, {"world_size", n}};
    json document = {{"process", process}, {"threads", threads}};
    auto parsed = records_from_json(document, fmt::format("rank{}.json", rank));
    EXPECT_TRUE(parsed.has_value());
    records.push_back(std::move(parsed->front()));
  }
  return records;
}

}  // namespace

TEST(TriageRankSet, CompactsRuns) {
  EXPECT_EQ(compact_ranges({0, 1, 2, 4, 5, 6, 7}), "0-2,4-7");
  EXPECT_EQ(compact_ranges({3}), "3");
  EXPECT_EQ(compact_ranges({}), "");
  EXPECT_EQ(compact_ranges({9, 5, 3, 4, 4}), "3-5,9");
  EXPECT_EQ(compact_ranges({0, 2, 4}), "0,2,4");
  EXPECT_EQ(compact_ranges({1023, 0, 1, 2}), "0-2,1023");
}

TEST(TriageMerge, IdenticalThreadsFoldWithTheirCount) {
  Triage triage = merge(job(1, {}));
  ASSERT_EQ(triage.folded[0].size(), 2u);  // the main thread's stack, the pool's stack
  EXPECT_EQ(triage.folded[0][0].count, 1);
  EXPECT_EQ(triage.folded[0][1].count, 2);
  EXPECT_EQ(triage.folded[0][1].threads, (std::vector<size_t>{1, 2}));
  std::string text = report::format_triage(triage);
  EXPECT_NE(text.find("×2 threads alike: \"pool\" (LWP 1001), \"pool\" (LWP 1002)"), std::string::npos) << text;
}

TEST(TriageMerge, PrefixTreeCountsThreadsAndProcesses) {
  Triage triage = merge(job(8, {3}));
  const TreeNode& root = triage.nodes[0];
  EXPECT_EQ(root.threads, 24);
  EXPECT_EQ(root.processes.size(), 8u);
  ASSERT_EQ(root.children.size(), 2u);  // <module> of the main threads, the pools' _bootstrap
  const TreeNode& module = triage.nodes[root.children[0]];
  EXPECT_EQ(triage.frames[module.frame].function, "<module>");
  EXPECT_EQ(module.threads, 8);
  ASSERT_EQ(module.children.size(), 2u);  // train at :88 and train at :120
  const TreeNode& all_reduce_line = triage.nodes[module.children[0]];
  const TreeNode& barrier_line = triage.nodes[module.children[1]];
  EXPECT_EQ(*triage.frames[all_reduce_line.frame].line, 88);
  EXPECT_EQ(all_reduce_line.processes, (std::vector<int>{0, 1, 2, 4, 5, 6, 7}));
  EXPECT_EQ(barrier_line.processes, (std::vector<int>{3}));
  const TreeNode& pool = triage.nodes[root.children[1]];
  EXPECT_EQ(pool.threads, 16);  // two folded threads in each of 8 processes
  EXPECT_EQ(pool.processes.size(), 8u);
}

TEST(TriageMerge, ClassesAreProcessesWithEqualStackSets) {
  std::vector<ProcessRecord> records = job(4, {1});
  // Another thread order and a third pool thread: the same set of stacks.
  std::swap(records[2].threads[0], records[2].threads[2]);
  records[2].threads.push_back(records[2].threads[1]);
  Triage triage = merge(std::move(records));
  ASSERT_EQ(triage.classes.size(), 2u);
  EXPECT_EQ(triage.classes[0].processes, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(triage.classes[1].processes, (std::vector<int>{1}));
  EXPECT_FALSE(triage.classes[0].outlier);
  EXPECT_TRUE(triage.classes[1].outlier);
  EXPECT_EQ(triage.class_of, (std::vector<int>{0, 1, 0, 0}));
}

TEST(TriageVerdict, OneOutlierOfEight) {
  Triage triage = merge(job(8, {3}));
  EXPECT_EQ(triage.verdict.kind, Verdict::Kind::kOutliers);
  // The odd one first, then the majority: one line each.
  EXPECT_EQ(triage.verdict.text,
            "the odd one out: rank 3 (PID 1003) in `Condition.wait` at train.py:120, waiting for "
            "Event 0x7f0000000010\n"
            "the other 7: ranks 0-2,4-7 in `all_reduce` at train.py:88");
  // The verdict opens the text.
  std::string text = report::format_triage(triage);
  EXPECT_EQ(text.substr(0, triage.verdict.text.size()), triage.verdict.text);
  EXPECT_NE(text.find("<- outlier"), std::string::npos) << text;
}

TEST(TriageVerdict, TwoGroupsOfFourHaveNoSingleOutlier) {
  Triage triage = merge(job(8, {4, 5, 6, 7}));
  EXPECT_EQ(triage.verdict.kind, Verdict::Kind::kNoMajority);
  EXPECT_EQ(triage.verdict.text,
            "no single odd one out: 2 groups, none larger\n"
            "ranks 0-3 (4 of 8) in `all_reduce` at train.py:88\n"
            "ranks 4-7 (4 of 8) in `Condition.wait` at train.py:120, waiting for Event 0x7f0000000010");
  for (const EquivalenceClass& cls : triage.classes) EXPECT_FALSE(cls.outlier);
}

TEST(TriageVerdict, AllAlike) {
  Triage triage = merge(job(4, {}));
  EXPECT_EQ(triage.verdict.kind, Verdict::Kind::kAllAlike);
  EXPECT_EQ(triage.verdict.text, "all 4 processes alike: ranks 0-3 in `all_reduce` at train.py:88");
}

TEST(TriageVerdict, ProcessesWithoutRanksGoByPositionAndPid) {
  Triage triage = merge(job(4, {2}, /*with_ranks=*/false));
  EXPECT_EQ(triage.verdict.lines.at(0).substr(0, triage.verdict.lines[0].find(" in ")),
            "the odd one out: process 2 (PID 1002)");
  EXPECT_EQ(triage.verdict.lines.at(1).substr(0, triage.verdict.lines[1].find(" in ")), "the other 3: processes 0-1,3");
}

TEST(TriageVerdict, BlockedOnKindWhenTheDescriptionsDiffer) {
  std::vector<ProcessRecord> records = job(4, {0, 1, 2});
  records[1].threads[0].blocked_description = "Event 0x7f0000000020";
  Triage triage = merge(std::move(records));
  // The kind of wait they share, in words.
  EXPECT_NE(triage.verdict.text.find("the other 3: ranks 0-2 in `Condition.wait` at train.py:120, waiting for an Event"),
            std::string::npos)
      << triage.verdict.text;
}

TEST(TriageVerdict, RolesAreComparedApart) {
  std::vector<ProcessRecord> records = job(4, {});
  ProcessRecord agent = records[0];
  agent.labels = ProcessLabels{};
  agent.labels.pid = 900;
  agent.labels.role = "elastic agent";
  agent.threads.resize(1);
  agent.threads[0].python_frames = {Frame{Frame::Kind::kPython, "run", "/usr/lib/python3/dist-packages/torch/distributed/run.py", 800}};
  records.push_back(agent);
  for (int i = 0; i < 4; ++i) records[i].labels.role = "training rank";
  Triage triage = merge(std::move(records));
  EXPECT_EQ(triage.verdict.kind, Verdict::Kind::kAllAlike);  // the agent is no odd rank
  for (const EquivalenceClass& cls : triage.classes) EXPECT_FALSE(cls.outlier);
  EXPECT_EQ(triage.verdict.lines, (std::vector<std::string>{
                                     "all 4 processes alike: ranks 0-3 in `all_reduce` at train.py:88",
                                     "process 4 (PID 900) [elastic agent] in `run` at run.py:800"}));
}

// A pre-fork server: the parent and its 4 forked workers are all plain processes; the parent is
// no odd worker, the one worker elsewhere is.
TEST(TriageVerdict, ForkedChildrenAreComparedApartFromTheirParent) {
  std::vector<ProcessRecord> records = job(5, {4}, false);
  records[0].labels.ppid = 1;
  records[0].threads.resize(1);
  records[0].threads[0].python_frames = {Frame{Frame::Kind::kPython, "main", "/srv/server.py", 58}};
  for (int i = 1; i < 5; ++i) records[i].labels.ppid = 1000;
  for (ProcessRecord& record : records) record.labels.role = "process";
  Triage triage = merge(std::move(records));
  ASSERT_EQ(triage.verdict.kind, Verdict::Kind::kOutliers) << triage.verdict.text;
  EXPECT_EQ(triage.processes[1].labels.role, "child");
  EXPECT_EQ(triage.processes[0].labels.role, "process");
  for (size_t c = 0; c < triage.classes.size(); ++c) {
    const bool has_parent = std::find(triage.classes[c].processes.begin(), triage.classes[c].processes.end(), 0) !=
                            triage.classes[c].processes.end();
    const bool has_odd = std::find(triage.classes[c].processes.begin(), triage.classes[c].processes.end(), 4) !=
                         triage.classes[c].processes.end();
    if (has_parent) {
      EXPECT_FALSE(triage.classes[c].outlier);
    }
    if (has_odd) {
      EXPECT_TRUE(triage.classes[c].outlier);
    }
  }
  EXPECT_NE(triage.verdict.text.find("the other 3: processes 1-3 [child] in `all_reduce`"), std::string::npos)
      << triage.verdict.text;
}

// A pre-fork server with 3 workers: 2 stuck at startup, 1 idle in accept. The idle one is no
// odd one out, whatever the count says.
TEST(TriageVerdict, IdleIsNotOdd) {
  std::vector<ProcessRecord> records = job(3, {0, 1}, false);
  records[2].threads.resize(1);
  records[2].threads[0].python_frames = {Frame{Frame::Kind::kPython, "serve", "/srv/server.py", 30},
                                         Frame{Frame::Kind::kPython, "accept", "/usr/lib/python3.11/socket.py", 294}};
  records[2].threads[0].idle = true;
  Triage triage = merge(std::move(records));
  ASSERT_EQ(triage.verdict.kind, Verdict::Kind::kOutliers) << triage.verdict.text;
  EXPECT_EQ(triage.verdict.lines, (std::vector<std::string>{
                                      "the odd ones out: processes 0-1 in `Condition.wait` at train.py:120, "
                                      "waiting for Event 0x7f0000000010",
                                      "idle (waiting for work): process 2 (PID 1002) in `accept` at server.py:30"}));
  EXPECT_FALSE(triage.classes[triage.class_of[2]].outlier);
}

TEST(TriageVerdict, TheSameProcessGivenTwiceCountsOnce) {
  std::vector<ProcessRecord> records = job(4, {3});
  records.push_back(records[3]);
  records.back().source = "again.json";
  Triage triage = merge(std::move(records));
  EXPECT_EQ(triage.processes.size(), 4u);
  ASSERT_EQ(triage.notes.size(), 1u);
  EXPECT_EQ(triage.notes[0], "PID 1003 given again (again.json): counted once");
  EXPECT_EQ(triage.verdict.lines.at(1), "the other 3: ranks 0-2 in `all_reduce` at train.py:88");
}

TEST(TriageVerdict, GroupsInDifferentCollectivesCanNeverMeet) {
  std::vector<ProcessRecord> records = job(4, {});
  records[3].threads[0].python_frames.edit(1).line = 95;
  records[3].threads[0].python_frames.edit(2).function = "barrier";
  Triage triage = merge(std::move(records));
  ASSERT_EQ(triage.verdict.lines.size(), 3u) << triage.verdict.text;
  EXPECT_EQ(triage.verdict.lines[0], "the odd one out: rank 3 (PID 1003) in `barrier` at train.py:95");
  EXPECT_EQ(triage.verdict.lines[2],
            "they wait in different collectives (`barrier` at train.py:95 and `all_reduce` at train.py:88), "
            "which can never meet");
}

// A child forked while a thread of its parent held a lock waits for it for ever; with the parent
// among the inputs, the line names the thread that held it.
TEST(TriageVerdict, ALockHeldAtForkIsNamedByItsHolderInTheParent) {
  std::vector<ProcessRecord> records = job(2, {}, false);
  records[0].threads[1].name = "cache-filler";
  records[0].threads[1].held_locks = {0x7f0000000abc};
  records[1].labels.ppid = 1000;
  for (ProcessRecord& record : records) record.labels.role = "process";
  records[0].threads[0].python_frames = {Frame{Frame::Kind::kPython, "main", "/srv/server.py", 58}};
  records[0].threads[0].blocked_kind = "child_process";
  records[0].threads[0].blocked_description = "child process 1001";
  ThreadRecord& waiter = records[1].threads[0];
  waiter.blocked_kind = "lock";
  waiter.blocked_object = 0x7f0000000abc;
  waiter.holder_gone = true;
  waiter.blocked_description = "Lock 0x7f0000000abc (no other thread here can release it)";
  Triage triage = merge(std::move(records));
  EXPECT_EQ(*triage.processes[1].threads[0].blocked_description,
            "a Lock that thread \"cache-filler\" of parent PID 1000 held at fork (fork before threads start, "
            "or use spawn)");
  // The stuck child comes first; its parent only waits for it.
  EXPECT_NE(triage.verdict.lines.at(0).find("thread \"cache-filler\" of parent PID 1000 held at fork"),
            std::string::npos)
      << triage.verdict.text;
}

TEST(TriageVerdict, DataLoaderWorkersAreTheirRanksWorkers) {
  std::vector<ProcessRecord> records = job(2, {1});
  records[1].labels.dataloader_worker_id = 1;
  EXPECT_EQ(process_name(merge(records), 1), "rank 1's DataLoader worker 1 (PID 1001)");
  records[1].labels.rank.reset();
  EXPECT_EQ(process_name(merge(records), 1), "DataLoader worker 1 (PID 1001)");
}

TEST(TriageVerdict, DeadlocksInsideTheProcessesCarryIn) {
  std::vector<ProcessRecord> records = job(4, {3});
  for (ProcessRecord& record : records) record.deadlocks = {"deadlock: thread \"a\" waits for ..."};
  Triage triage = merge(std::move(records));
  EXPECT_NE(triage.verdict.text.find("at train.py:88, a deadlock in each"), std::string::npos)
      << triage.verdict.text;
  EXPECT_NE(triage.verdict.text.find("waiting for Event 0x7f0000000010; deadlock: thread \"a\""),
            std::string::npos) << triage.verdict.text;
}

TEST(TriageLabels, ReadFromLabelsObjectOrProcessAndFallBack) {
  ProcessLabels labels = labels_from_json({{"pid", 5}, {"parent_pid", 4}, {"host", "node7"},
                                           {"role", "training rank"},
                                           {"labels", {{"rank", 3}, {"local_rank", 1}, {"world_size", 8}}}});
  EXPECT_EQ(labels.rank, 3);
  EXPECT_EQ(labels.local_rank, 1);
  EXPECT_EQ(labels.world_size, 8);
  EXPECT_EQ(labels.ppid, 4);
  EXPECT_EQ(labels.host, "node7");
  EXPECT_EQ(rank_of(labels), 3);
  ProcessLabels from_slurm = labels_from_json({{"pid", 5}, {"slurm_procid", "12"}});
  EXPECT_EQ(rank_of(from_slurm), 12);
  ProcessLabels bad = labels_from_json({{"pid", 5}, {"labels", {{"rank", "x1"}}}});
  EXPECT_FALSE(rank_of(bad).has_value());
}

TEST(TriagePlace, NamesTheCallFromTheUsersOwnCode) {
  std::vector<Frame> stack = {
      {Frame::Kind::kPython, "<module>", "/job/train.py", 130},
      {Frame::Kind::kPython, "train", "/job/train.py", 88},
      {Frame::Kind::kPython, "_exception_logger.<locals>.wrapper", "/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py", 75},
      {Frame::Kind::kPython, "all_reduce", "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 2050}};
  auto place = place_of(stack);
  ASSERT_TRUE(place);
  EXPECT_EQ(format_place(*place), "`all_reduce` at train.py:88");
  std::vector<Frame> library_only = {{Frame::Kind::kPython, "Thread._bootstrap", "/usr/lib/python3.11/threading.py", 995},
                                     {Frame::Kind::kPython, "Condition.wait", "/usr/lib/python3.11/threading.py", 320}};
  EXPECT_EQ(format_place(*place_of(library_only)), "`Condition.wait` at threading.py:320");
}

// A multiprocessing child forked by `p.start()` keeps its parent's frames outside
// BaseProcess._bootstrap (the stacks of a real fork child, pyenv's 3.12.1): its place is in its
// own frames, the target it runs, never the parent's `start` call.
TEST(TriagePlace, AForkedChildIsPlacedInItsOwnFramesNotItsParentsStart) {
  const std::string lib = "/root/.pyenv/versions/3.12.1/lib/python3.12/multiprocessing/";
  std::vector<Frame> inherited = {
      {Frame::Kind::kPython, "<module>", "/job/feed.py", 7},
      {Frame::Kind::kPython, "BaseProcess.start", lib + "process.py", 121},
      {Frame::Kind::kPython, "Process._Popen", lib + "context.py", 224},
      {Frame::Kind::kPython, "Popen._launch", lib + "popen_fork.py", 71},
      {Frame::Kind::kPython, "BaseProcess._bootstrap", lib + "process.py", 314},
      {Frame::Kind::kPython, "BaseProcess.run", lib + "process.py", 108},
      {Frame::Kind::kPython, "child", "/job/feed.py", 3},
      {Frame::Kind::kPython, "Queue.put", lib + "queues.py", 94}};
  EXPECT_EQ(format_place(*place_of(inherited)), "`Queue.put` at feed.py:3");
  // At its exit, in the library alone: the innermost frame, still not the parent's line 7.
  std::vector<Frame> exiting(inherited.begin(), inherited.begin() + 5);
  exiting.push_back({Frame::Kind::kPython, "_exit_function", lib + "util.py", 360});
  EXPECT_EQ(format_place(*place_of(exiting)), "`_exit_function` at util.py:360");
}

TEST(TriageMerge, NativeStacksWhenEveryProcessHasThem) {
  std::vector<ProcessRecord> records = job(2, {});
  for (ProcessRecord& record : records) {
    for (ThreadRecord& thread : record.threads) {
      std::vector<Frame> native = {{Frame::Kind::kNative, "__libc_start_main", "/lib/libc.so.6", std::nullopt}};
      native.insert(native.end(), thread.python_frames.begin(), thread.python_frames.end());
      native.push_back({Frame::Kind::kNative, "futex_wait", "/lib/libc.so.6", std::nullopt});
      thread.native_frames = native;
    }
  }
  Triage with_native = merge(records);
  EXPECT_TRUE(with_native.native);
  EXPECT_EQ(with_native.frames[with_native.nodes[with_native.nodes[0].children[0]].frame].function, "__libc_start_main");
  records[1].threads[0].native_frames.reset();
  Triage without = merge(records);
  EXPECT_FALSE(without.native);
  ASSERT_EQ(without.notes.size(), 1u);
}

TEST(TriageRender, DotHtmlAndJsonCarryRankSetsAndTheOutlier) {
  Triage triage = merge(job(8, {3}));
  std::string dot = report::triage_dot(triage);
  EXPECT_NE(dot.find("label=\"7 threads: ranks 0-2,4-7\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"1 thread: rank 3 (PID 1003)\", color=\"#d62728\""), std::string::npos) << dot;
  json document = report::triage_document(triage);
  EXPECT_EQ(document["verdict"], triage.verdict.text);
  EXPECT_EQ(document["groups"][1]["processes"], "3");
  EXPECT_EQ(document["groups"][0]["processes"], "0-2,4-7");
  EXPECT_TRUE(document["groups"][1]["outlier"].get<bool>());
  EXPECT_EQ(document["tree"]["threads"], 24);
  std::string html = report::triage_html(triage);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // the SVG namespace only
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<module>"), std::string::npos);  // '<' in the data is escaped
  EXPECT_NE(html.find("\\u003cmodule>"), std::string::npos);
}

TEST(TriageRecords, RejectsWhatIsNoDocument) {
  EXPECT_FALSE(records_from_json(json::object(), "x.json").has_value());
  EXPECT_FALSE(records_from_json(json(3), "x.json").has_value());
  auto two = records_from_json(json::array({{{"threads", json::array()}}, {{"threads", json::array()}}}), "pids.json");
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1].source, "pids.json[1]");
}

// Documents from other machines, read as triage reads files (in place): nesting a million deep
// costs no stack, a string longer than kMaxTriageString is cut and counted, bytes that are not
// UTF-8 are kept for the writers to escape, and a text that is no JSON is named as such.
TEST(TriageRecords, HostileTextIsBoundedNotFatal) {
  size_t cut = 0;
  std::string deep(1'000'000, '[');
  auto nested = records_from_text(deep, "deep.json", cut);
  ASSERT_FALSE(nested.has_value());
  EXPECT_NE(nested.error().describe().find("deep.json: not valid JSON"), std::string::npos);
  std::string closed = std::string(200'000, '[') + std::string(200'000, ']');
  EXPECT_FALSE(records_from_text(closed, "closed.json", cut).has_value());  // an array, no process

  const std::string long_name(100'000, 'x');
  std::string text = R"({"process": {"pid": 7, "labels": {"rank": "3"}}, "threads": [{"name": ")" + long_name +
                     R"(", "native_thread_id": 7, "frames": [{"qualname": "f\u00e9", "file": "a\u0000b.py",
                     "line": 3, "locals": [{"name": "x", "repr": ")" + std::string("\xff\xfe") + R"("}]}]}]})";
  auto records = records_from_text(text, "long.json", cut);
  ASSERT_TRUE(records.has_value());
  EXPECT_EQ(cut, 1u);
  const ThreadRecord& thread = records->front().threads.at(0);
  EXPECT_EQ(thread.name->size(), kMaxTriageString + 3);
  EXPECT_TRUE(thread.name->ends_with("..."));
  EXPECT_EQ(records->front().labels.rank, 3);  // a label given as text still counts
  EXPECT_TRUE(thread.main_thread);             // no "state": the thread whose id is the PID
  EXPECT_EQ(thread.python_frames.at(0).function, "f\xc3\xa9");
  EXPECT_EQ(thread.python_frames.at(0).file, std::string("a\0b.py", 6));
  EXPECT_EQ(thread.python_locals.at(0).at(0).second, "\xff\xfe");
  // The text report escapes what the document held.
  Triage triage = merge(std::move(*records));
  const std::string shown = report::format_triage(triage);
  EXPECT_EQ(shown.find('\0'), std::string::npos);

  std::string truncated = R"({"threads": [{"name": "a")";
  EXPECT_FALSE(records_from_text(truncated, "cut.json", cut).has_value());
}

// Ranks of one job hold the same values in most frames: parsed through one SharingPool (as the
// triage's workers do), those frames' values are held once for all ranks, and a frame whose
// values differ (the rank number) keeps its own, which the locals verdict still reads.
TEST(TriageRecords, FramesWithTheSameValuesShareThemAcrossRanks) {
  SharingPool pool;
  ParseScratch scratch;
  scratch.sharing = &pool;
  std::vector<ProcessRecord> ranks;
  for (int rank = 0; rank < 3; ++rank) {
    std::string text = fmt::format(
        R"J({{"process": {{"pid": {0}, "labels": {{"rank": {1}}}}}, "threads": [{{"native_thread_id": {0},
        "frames": [{{"qualname": "main", "file": "t.py", "line": 9, "locals": [{{"name": "lr", "repr": "0.01"}},
        {{"name": "model", "repr": "Net(layers=12)"}}]}},
        {{"qualname": "step", "file": "t.py", "line": 3, "locals": [{{"name": "rank", "repr": "{1}"}}]}},
        {{"qualname": "wait", "file": "t.py", "line": 1, "locals": []}}]}}]}})J",
        100 + rank, rank);
    size_t cut = 0;
    auto records = records_from_text(text, fmt::format("rank{}.json", rank), cut, &scratch);
    ASSERT_TRUE(records.has_value()) << records.error().describe();
    ranks.push_back(std::move(records->front()));
  }
  auto values = [&](int rank, size_t frame) { return &*ranks[rank].threads.at(0).python_locals.at(frame).begin(); };
  EXPECT_EQ(values(0, 0), values(1, 0));  // one copy of main's values
  EXPECT_EQ(values(0, 0), values(2, 0));
  EXPECT_NE(values(0, 1), values(1, 1));  // each rank's own `rank`
  EXPECT_EQ(ranks[2].threads.at(0).python_locals.at(1).at(0), (FrameLocals::Entry{"rank", "2"}));
  EXPECT_TRUE(ranks[1].threads.at(0).python_locals.at(2).empty());  // a frame with no values
  EXPECT_EQ(pool.distinct_locals(), 4u);  // main's, and three ranks'
  // The same three frames: one stack for the three ranks.
  EXPECT_EQ(&ranks[0].threads.at(0).python_frames.front(), &ranks[2].threads.at(0).python_frames.front());
  EXPECT_EQ(pool.distinct_stacks(), 1u);
  EXPECT_EQ(ranks[1].threads.at(0).python_frames.at(1).function, "step");
}

namespace {

// coreanalyze --json's "asyncio" task (docs/json-schema.md): coroutine_stack innermost first.
json task_json(const char* address, const char* name, const char* state, std::initializer_list<F> innermost_first,
               const char* kind = nullptr, const char* detail = nullptr) {
  json task = {{"address", address}, {"name", name}, {"state", state}, {"thread", nullptr},
               {"coroutine_stack", frames_json(innermost_first)}, {"awaits", nullptr},
               {"awaited_by", json::array()}};
  if (kind) task["awaits"] = {{"kind", kind}, {"object", "0x7f0000009000"}, {"type", "_asyncio.Future"},
                              {"tasks", json::array()}, {"detail", detail}};
  return task;
}

// Asyncio services: the main thread idle in the event loop, a request handler awaiting a Future
// never set, a sleeper; the ones in `odd` have their handler stuck on a Lock instead. Each also
// has a running task (on the main thread's stack already), a done one and one whose coroutine
// stack could not be read: none of those is a stack of its own.
std::vector<ProcessRecord> services(int n, std::vector<int> odd) {
  std::vector<ProcessRecord> records;
  for (int i = 0; i < n; ++i) {
    const int64_t pid = 2000 + i;
    const bool is_odd = std::find(odd.begin(), odd.end(), i) != odd.end();
    json main = thread_json("MainThread", pid, true,
                            {{"/srv/app.py", 50, "<module>"},
                             {"/usr/lib/python3.12/asyncio/runners.py", 118, "Runner.run"},
                             {"/usr/lib/python3.12/selectors.py", 468, "EpollSelector.select"}},
                            "select", "asyncio event loop");
    json handler = is_odd ? task_json("0x7f0000001000", "request-handler", "pending",
                                      {{"/usr/lib/python3.12/asyncio/locks.py", 113, "Lock.acquire"},
                                       {"/srv/app.py", 14, "handler"}},
                                      "lock", "asyncio.Lock held by holder")
                          : task_json("0x7f0000001000", "request-handler", "pending",
                                      {{"/srv/app.py", 6, "fetch"}, {"/srv/app.py", 8, "handler"}},
                                      "future", "Future pending, 1 callback");
    json tasks = json::array(
        {handler,
         task_json("0x7f0000002000", "sleeper", "pending",
                   {{"/usr/lib/python3.12/asyncio/tasks.py", 665, "sleep"}}, "sleep", "asyncio.sleep(3600)"),
         task_json("0x7f0000003000", "Task-1", "running", {{"/srv/app.py", 46, "main"}}),
         task_json("0x7f0000004000", "finished", "done", {}),
         task_json("0x7f0000005000", "unreadable", "pending", {})});
    json document = {{"process", {{"pid", pid}}},
                     {"threads", json::array({main})},
                     {"asyncio", {{"tasks_total", 5}, {"tasks", tasks}, {"cycles", json::array()},
                                  {"warnings", json::array()}}}};
    auto parsed = records_from_json(document, fmt::format("service{}.json", i));
    EXPECT_TRUE(parsed.has_value());
    records.push_back(std::move(parsed->front()));
  }
  return records;
}

const TreeNode* child_named(const Triage& triage, const TreeNode& node, const std::string& function) {
  for (int child : node.children)
    if (triage.frames[triage.nodes[child].frame].function == function) return &triage.nodes[child];
  return nullptr;
}

}  // namespace

TEST(TriageAsyncio, PendingTasksAreStacksOutermostFirst) {
  std::vector<ProcessRecord> records = services(1, {});
  ASSERT_EQ(records[0].threads.size(), 3u);  // the main thread, request-handler, sleeper
  const ThreadRecord& handler = records[0].threads[1];
  EXPECT_TRUE(handler.asyncio_task);
  EXPECT_FALSE(records[0].threads[0].asyncio_task);
  EXPECT_EQ(handler.name, "request-handler");
  ASSERT_EQ(handler.python_frames.size(), 2u);
  EXPECT_EQ(handler.python_frames[0].function, "handler");
  EXPECT_EQ(handler.python_frames[1].function, "fetch");
  EXPECT_EQ(handler.blocked_kind, "future");
  EXPECT_EQ(handler.blocked_description, "Future pending, 1 callback");
  EXPECT_EQ(records[0].threads[2].name, "sleeper");
}

TEST(TriageAsyncio, IdenticalTasksOfAFleetFoldIntoOneBranch) {
  Triage triage = merge(services(3, {}));
  const TreeNode& root = triage.nodes[0];
  EXPECT_EQ(root.threads, 9);  // 3 main threads and 6 tasks
  EXPECT_EQ(root.tasks, 6);
  const TreeNode* handler = child_named(triage, root, "handler");
  ASSERT_NE(handler, nullptr);
  EXPECT_EQ(handler->threads, 3);
  EXPECT_EQ(handler->tasks, 3);
  EXPECT_EQ(handler->processes, (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(handler->children.size(), 1u);
  EXPECT_EQ(triage.frames[triage.nodes[handler->children[0]].frame].function, "fetch");
  const TreeNode* module = child_named(triage, root, "<module>");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->tasks, 0);
  EXPECT_EQ(triage.classes.size(), 1u);
  EXPECT_EQ(triage.verdict.kind, Verdict::Kind::kAllAlike);

  std::string text = report::format_triage(triage);
  EXPECT_NE(text.find("Merged Python stacks of 3 processes (3 threads, 6 asyncio tasks, 1 group):"),
            std::string::npos) << text;
  EXPECT_NE(text.find("`handler` at app.py:8  [3 asyncio tasks: processes 0-2]"), std::string::npos) << text;
  EXPECT_NE(text.find("`<module>` at app.py:50  [3 threads: processes 0-2]"), std::string::npos) << text;
  EXPECT_NE(text.find("  asyncio task \"request-handler\"\n    Awaiting: Future pending, 1 callback\n"
                      "    File \"/srv/app.py\", line 8, in handler\n"),
            std::string::npos) << text;

  json document = report::triage_document(triage);
  EXPECT_EQ(document["tree"]["threads"], 3);
  EXPECT_EQ(document["tree"]["asyncio_tasks"], 6);
  EXPECT_EQ(document["processes"][0]["threads"], 1);
  EXPECT_EQ(document["processes"][0]["asyncio_tasks"], 2);
  const json& stacks = document["groups"][0]["stacks"];
  ASSERT_EQ(stacks.size(), 3u);
  EXPECT_EQ(stacks[1]["asyncio_tasks"], 1);
  EXPECT_TRUE(stacks[1]["threads"][0]["asyncio_task"].get<bool>());
  EXPECT_EQ(stacks[1]["blocked_on"], "Future pending, 1 callback");
  std::string dot = report::triage_dot(triage);
  EXPECT_NE(dot.find("3 asyncio tasks: processes 0-2"), std::string::npos) << dot;
}

TEST(TriageAsyncio, AnAllAlikeFleetIsNamedByATaskNotByItsIdleLoop) {
  Triage triage = merge(services(3, {}));
  EXPECT_EQ(triage.verdict.kind, Verdict::Kind::kAllAlike);
  EXPECT_EQ(triage.verdict.text, "all 3 processes alike: processes 0-2 in `fetch` at app.py:6, "
                                 "an asyncio task awaiting Future pending, 1 callback");
}

TEST(TriageAsyncio, TheOddTaskMakesTheOutlierAndSaysWhatItAwaits) {
  Triage triage = merge(services(4, {2}));
  EXPECT_EQ(triage.verdict.kind, Verdict::Kind::kOutliers);
  EXPECT_NE(triage.verdict.lines.at(0).find("the odd one out: process 2 (PID 2002) in `Lock.acquire` at app.py:14, "
                                           "an asyncio task awaiting asyncio.Lock held by holder"),
            std::string::npos) << triage.verdict.text;
  std::string text = report::format_triage(triage);
  EXPECT_NE(text.find("`handler` at app.py:14  [1 asyncio task: process 2 (PID 2002)]  <- outlier"),
            std::string::npos) << text;
}

TEST(TriageAsyncio, TasksKeepTheNativeMergeAndTheirCyclesAreDeadlocks) {
  std::vector<ProcessRecord> records = services(2, {});
  for (ProcessRecord& record : records) {
    ThreadRecord& main = record.threads[0];
    std::vector<Frame> native = {{Frame::Kind::kNative, "__libc_start_main", "/lib/libc.so.6", std::nullopt}};
    native.insert(native.end(), main.python_frames.begin(), main.python_frames.end());
    main.native_frames = native;
  }
  Triage triage = merge(records);
  EXPECT_TRUE(triage.native);  // a task's coroutine stack is all of its stack
  EXPECT_NE(child_named(triage, triage.nodes[0], "handler"), nullptr);

  json document = {{"threads", json::array()},
                   {"asyncio", {{"tasks", json::array({task_json("0xa", "holder", "pending", {{"/srv/app.py", 12, "holder"}}, "task", "waiter"),
                                                       task_json("0xb", "waiter", "pending", {{"/srv/app.py", 14, "waiter"}}, "lock", "asyncio.Lock held by holder")})},
                                {"cycles", json::array({json::array({"0xa", "0xb"})})}}}};
  auto parsed = records_from_json(document, "cycle.json");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ((*parsed)[0].deadlocks, (std::vector<std::string>{"asyncio tasks holder, waiter await each other"}));
}

TEST(TriageAsyncio, ThousandsOfTasksAlikeAreCountedNotListed) {
  std::vector<ProcessRecord> records = services(1, {});
  ThreadRecord handler = records[0].threads[1];
  for (int i = 0; i < 20000; ++i) {
    handler.name = fmt::format("Task-{}", i + 100);
    records[0].threads.push_back(handler);
  }
  Triage triage = merge(std::move(records));
  std::string text = report::format_triage(triage);
  EXPECT_NE(text.find("  ×20001 asyncio tasks alike: \"request-handler\", \"Task-100\", \"Task-101\", "
                      "\"Task-102\", \"Task-103\", \"Task-104\", \"Task-105\", \"Task-106\", ... (19993 more)\n"),
            std::string::npos) << text.substr(0, 2000);
  EXPECT_EQ(text.find("Task-107\""), std::string::npos);
  json document = report::triage_document(triage);
  const json& stack = document["groups"][0]["stacks"][1];
  EXPECT_EQ(stack["count"], 20001);
  EXPECT_EQ(stack["threads"].size(), 64u);
  EXPECT_EQ(stack["threads_not_listed"], 20001 - 64);
}

// The training loop's own variables say what sets the odd rank apart: values alike within each
// group and different between them are named; those alike everywhere, those that differ inside a
// group (the rank itself) and those that name an address are not.
TEST(TriageVerdict, LocalsThatSetTheOddRankApart) {
  std::vector<ProcessRecord> records = job(4, {});
  records[3].threads[0].python_frames.edit(1).line = 95;
  records[3].threads[0].python_frames.edit(2).function = "barrier";
  for (int rank = 0; rank < 4; ++rank) {
    ThreadRecord& main = records[rank].threads[0];
    main.python_locals.assign(main.python_frames.size(), {});
    main.python_locals[1] = {{"rank", std::to_string(rank)},
                             {"step", rank == 3 ? "21" : "22"},
                             {"lr", "0.01"},
                             {"loss", fmt::format("<Tensor object at 0x7f00000{}>", rank)},
                             {"phase", rank == 3 ? "'eval'" : "'train'"}};
  }
  Triage triage = merge(std::move(records));
  ASSERT_EQ(triage.verdict.lines.size(), 4u) << triage.verdict.text;
  EXPECT_EQ(triage.verdict.lines[3],
            "in `train` at train.py, which all run: rank 3: step = 21, phase = 'eval'; "
            "others: step = 22, phase = 'train' (stopped at lines 95 and 88: a value set in between may differ "
            "for that alone)");
}

// Issue 34: a parameter's default (world_size = -1) that the others replaced at a later line is
// no cause: where the frames stopped at the same line, nothing is added; where not, the line says so.
TEST(TriageVerdict, LocalsOfFramesStoppedAtTheSameLineNeedNoCaveat) {
  std::vector<ProcessRecord> records = job(4, {});
  records[3].threads[0].python_frames.edit(2).function = "barrier";  // the same line 88 of `train`
  for (int rank = 0; rank < 4; ++rank) {
    ThreadRecord& main = records[rank].threads[0];
    main.python_locals.assign(main.python_frames.size(), {});
    main.python_locals[1] = {{"steps", rank == 3 ? "11" : "12"}};
  }
  Triage triage = merge(std::move(records));
  ASSERT_EQ(triage.verdict.lines.size(), 4u) << triage.verdict.text;  // odd, others, never meet, locals
  EXPECT_EQ(triage.verdict.lines[3], "in `train` at train.py, which all run: rank 3: steps = 11; others: steps = 12");
}

TEST(TriageVerdict, NoLocalsLineWithoutLocalsOrDifferences) {
  std::vector<ProcessRecord> records = job(4, {3});
  Triage without = merge(records);
  for (const std::string& line : without.verdict.lines) EXPECT_EQ(line.find("which all run"), std::string::npos) << line;
  for (ProcessRecord& record : records) {
    ThreadRecord& main = record.threads[0];
    main.python_locals.assign(main.python_frames.size(), {{"lr", "0.01"}});
  }
  Triage alike = merge(std::move(records));
  for (const std::string& line : alike.verdict.lines) EXPECT_EQ(line.find("which all run"), std::string::npos) << line;
}

namespace {

// Ranks of a job that all wait in init_process_group at train.py:37; rank 0 (hosting the
// TCPStore) one call deeper than the others, as torch's rendezvous has it.
std::vector<ProcessRecord> joining_job(int world_size, std::vector<int> present) {
  std::vector<ProcessRecord> all = job(world_size, {});
  std::vector<ProcessRecord> records;
  for (int rank : present) {
    ProcessRecord record = all[rank];
    record.threads.resize(1);
    ThreadRecord& main = record.threads[0];
    main.python_frames = {
        Frame{Frame::Kind::kPython, "<module>", "/job/train.py", 130},
        Frame{Frame::Kind::kPython, "main", "/job/train.py", 37},
        Frame{Frame::Kind::kPython, "init_process_group",
              "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 761}};
    if (rank == 0) {
      main.python_frames.push_back(Frame{Frame::Kind::kPython, "_create_c10d_store",
                                         "/usr/lib/python3/dist-packages/torch/distributed/rendezvous.py", 180});
      main.blocked_kind = "collective";
      main.blocked_description = "init_process_group's rendezvous: the TCPStore that every rank must connect to";
    } else {
      main.python_frames.push_back(Frame{Frame::Kind::kPython, "_new_process_group_helper",
                                         "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 862});
      main.blocked_kind = "socket";
      main.blocked_description = "socket recvfrom (fd 3)";
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace

// Issue 34: rank 3 returned before init_process_group; ranks 0-2 wait for it there. The absent
// rank is the verdict's first line, and rank 0, which differs only by hosting the store (below
// the same line of the program), is no odd one out.
TEST(TriageAbsentRanks, ARankThatNeverJoinedComesFirst) {
  Triage triage = merge(joining_job(4, {0, 1, 2}));
  ASSERT_GE(triage.verdict.lines.size(), 2u) << triage.verdict.text;
  EXPECT_EQ(triage.verdict.lines[0],
            "rank 3 of 4 never joined: ranks 0-2 wait for it in `init_process_group` at train.py:37; "
            "no process of rank 3 is among the 3 triaged");
  EXPECT_EQ(triage.verdict.lines[1],
            "all 3 processes at one place: ranks 0-2 in `init_process_group` at train.py:37 (ranks 1-2 waiting "
            "for socket recvfrom (fd 3); rank 0 (PID 1000) waiting for init_process_group's rendezvous: the ...");
  for (const EquivalenceClass& cls : triage.classes) EXPECT_FALSE(cls.outlier) << triage.verdict.text;
  EXPECT_EQ(triage.verdict.absent_ranks, (std::vector<int64_t>{3}));
  const json document = report::triage_document(triage);
  EXPECT_EQ(document["absent_ranks"], json::array({3}));
  EXPECT_EQ(document["world_size"], 4);
}

TEST(TriageAbsentRanks, RanksMissingFromACollective) {
  std::vector<ProcessRecord> records = job(8, {});
  records.resize(4);
  Triage triage = merge(std::move(records));
  ASSERT_FALSE(triage.verdict.lines.empty());
  EXPECT_EQ(triage.verdict.lines[0],
            "ranks 4-7 of 8 are missing: ranks 0-3 wait for them in `all_reduce` at train.py:88, and no "
            "process of those ranks is among the 4 triaged");
  EXPECT_EQ(triage.verdict.absent_ranks, (std::vector<int64_t>{4, 5, 6, 7}));
}

// Present ranks at different places: the absent rank is stated, nothing is said to wait for it.
TEST(TriageAbsentRanks, MissingWhereThePresentDoNotWaitTogether) {
  std::vector<ProcessRecord> records = job(4, {1});
  records.resize(3);
  Triage triage = merge(std::move(records));
  ASSERT_GE(triage.verdict.lines.size(), 3u);
  EXPECT_EQ(triage.verdict.lines[0], "rank 3 of 4 is missing: no process of rank 3 is among the 3 triaged");
  EXPECT_EQ(triage.verdict.lines[1].substr(0, 30), "the odd one out: rank 1 (PID 1");
}

TEST(TriageAbsentRanks, NothingWhenTheMembershipIsUnknownOrInconsistent) {
  std::vector<ProcessRecord> records = job(4, {});
  records.resize(3);
  records[1].labels.world_size = 8;  // two jobs, or a label gone wrong: no claim
  Triage inconsistent = merge(std::move(records));
  EXPECT_TRUE(inconsistent.verdict.absent_ranks.empty());
  EXPECT_EQ(inconsistent.verdict.text.find("missing"), std::string::npos) << inconsistent.verdict.text;
  std::vector<ProcessRecord> unknown = job(4, {});
  unknown.resize(3);
  for (ProcessRecord& record : unknown) record.labels.world_size.reset();
  EXPECT_TRUE(merge(std::move(unknown)).verdict.absent_ranks.empty());
  std::vector<ProcessRecord> outside = job(4, {});
  outside.resize(3);
  outside[2].labels.rank = 9;  // a rank beyond its world size
  EXPECT_TRUE(merge(std::move(outside)).verdict.absent_ranks.empty());
}

// torch.multiprocessing.spawn's ranks know no WORLD_SIZE: their parent's nprocs says how many.
TEST(TriageAbsentRanks, SpawnsParentSaysHowManyRanks) {
  std::vector<ProcessRecord> records = job(4, {});
  records.resize(3);
  for (ProcessRecord& record : records) {
    record.labels.world_size.reset();
    record.labels.ppid = 999;
  }
  ProcessRecord parent = records[0];
  parent.labels = ProcessLabels{};
  parent.labels.pid = 999;
  parent.labels.spawn_nprocs = 4;
  parent.threads.resize(1);
  parent.threads[0].python_frames = {Frame{Frame::Kind::kPython, "spawn", "/job/train.py", 59}};
  records.push_back(parent);
  Triage triage = merge(std::move(records));
  EXPECT_EQ(triage.verdict.absent_ranks, (std::vector<int64_t>{3}));
  EXPECT_EQ(triage.verdict.lines.at(0).substr(0, 22), "rank 3 of 4 is missing") << triage.verdict.text;
}

// Two groups of two in different collectives: no majority, and none needed: they can never meet,
// which is the first line.
TEST(TriageVerdict, TiedGroupsInDifferentCollectivesCanNeverMeet) {
  std::vector<ProcessRecord> records = job(4, {});
  for (int rank : {2, 3}) {
    records[rank].threads[0].python_frames.edit(1).line = 95;
    records[rank].threads[0].python_frames.edit(2).function = "barrier";
  }
  Triage triage = merge(std::move(records));
  EXPECT_EQ(triage.verdict.kind, Verdict::Kind::kNoMajority);
  ASSERT_EQ(triage.verdict.lines.size(), 3u) << triage.verdict.text;
  EXPECT_EQ(triage.verdict.lines[0],
            "ranks 0-1 and ranks 2-3 wait for each other in different collectives (`all_reduce` at train.py:88 "
            "and `barrier` at train.py:95), which can never meet");
  EXPECT_EQ(triage.verdict.lines[1].substr(0, 19), "ranks 0-1 (2 of 4) ");
  EXPECT_EQ(triage.verdict.lines[2].substr(0, 19), "ranks 2-3 (2 of 4) ");
}

namespace {

// A parent in pool.map and its pool's two worker processes, each waiting for work unless `busy`.
std::vector<ProcessRecord> pool_job(bool busy_worker) {
  std::vector<ProcessRecord> records = job(3, {}, /*with_ranks=*/false);
  const std::string pool = "/usr/lib/python3.11/multiprocessing/pool.py";
  ThreadRecord& parent = records[0].threads[0];
  parent.python_frames = {Frame{Frame::Kind::kPython, "main", "/job/crunch.py", 41},
                          Frame{Frame::Kind::kPython, "Pool.map", pool, 367},
                          Frame{Frame::Kind::kPython, "ApplyResult.get", pool, 768},
                          Frame{Frame::Kind::kPython, "Event.wait", "/usr/lib/python3.11/threading.py", 622}};
  parent.blocked_kind = "event";
  parent.blocked_description = "Event 0x7f0000000030";
  records[0].threads.resize(1);
  for (int worker : {1, 2}) {
    records[worker].labels.ppid = 1000;
    records[worker].threads.resize(1);
    ThreadRecord& thread = records[worker].threads[0];
    thread.python_frames = {Frame{Frame::Kind::kPython, "worker", pool, 114},
                            Frame{Frame::Kind::kPython, "SimpleQueue.get", "/usr/lib/python3.11/multiprocessing/queues.py", 364}};
    thread.idle = !(busy_worker && worker == 2);
  }
  return records;
}

}  // namespace

TEST(TriageLostPoolTask, AResultNoWorkerMakesComesFirst) {
  Triage triage = merge(pool_job(false));
  ASSERT_FALSE(triage.verdict.lines.empty());
  EXPECT_EQ(triage.verdict.lines[0],
            "a task of `Pool.map` at crunch.py:41 is lost: process 0 (PID 1000) waits for its result, and every "
            "worker of its pool (processes 1-2) waits for work");
}

TEST(TriageLostPoolTask, NoClaimWhileAWorkerWorks) {
  Triage triage = merge(pool_job(true));
  EXPECT_EQ(triage.verdict.text.find("is lost"), std::string::npos) << triage.verdict.text;
  // Nor without the workers: nothing is known of them.
  std::vector<ProcessRecord> parent_only = pool_job(false);
  parent_only.resize(1);
  EXPECT_EQ(merge(std::move(parent_only)).verdict.text.find("is lost"), std::string::npos);
}

namespace {

// A parent in Popen.wait for its child, the child writing a pipe whose read end `readers` hold.
std::vector<ProcessRecord> pipe_job(std::vector<int64_t> readers) {
  std::vector<ProcessRecord> records = job(2, {}, /*with_ranks=*/false);
  for (ProcessRecord& record : records) record.threads.resize(1);
  ThreadRecord& parent = records[0].threads[0];
  parent.python_frames = {Frame{Frame::Kind::kPython, "main", "/job/run.py", 37},
                          Frame{Frame::Kind::kPython, "Popen.wait", "/usr/lib/python3.11/subprocess.py", 1264}};
  parent.blocked_kind = "child_process";
  parent.child_pid = 1001;
  records[1].labels.ppid = 1000;
  ThreadRecord& child = records[1].threads[0];
  child.python_frames = {Frame{Frame::Kind::kPython, "report", "/job/child.py", 29}};
  child.blocked_kind = "write";
  child.other_end_pids = std::move(readers);
  return records;
}

}  // namespace

TEST(TriageProcessCycles, AParentWaitingForAChildThatWritesToItIsACycle) {
  Triage triage = merge(pipe_job({1000}));
  ASSERT_FALSE(triage.verdict.lines.empty());
  EXPECT_EQ(triage.verdict.lines[0],
            "each waits for the other: process 0 (PID 1000) waits in `Popen.wait` at run.py:37 for process 1 to "
            "exit; process 1 (PID 1001) writes in `report` at child.py:29 to a pipe only process 0 reads");
}

TEST(TriageProcessCycles, NoCycleWhereAnotherProcessCouldRead) {
  // A sibling also holds the read end: it could read, and nothing says it will not.
  EXPECT_EQ(merge(pipe_job({1000, 1002})).verdict.text.find("each waits"), std::string::npos);
  EXPECT_EQ(merge(pipe_job({})).verdict.text.find("each waits"), std::string::npos);
}

// Snapshot cores know which pipe a thread writes to, not who reads it: the triage matches the
// pipe's inode with the read end another process's note lists.
TEST(TriageProcessCycles, PipeEndsMatchedByInodeCloseTheCycle) {
  std::vector<ProcessRecord> records = pipe_job({});
  records[1].threads[0].blocked_fd = 1;
  records[1].pipe_ends = {{1, 77, /*read_end=*/false}};
  records[0].pipe_ends = {{3, 77, /*read_end=*/true}, {4, 78, /*read_end=*/false}};
  Triage triage = merge(records);
  ASSERT_FALSE(triage.verdict.lines.empty());
  EXPECT_EQ(triage.verdict.lines[0].rfind("each waits for the other: ", 0), 0u) << triage.verdict.lines[0];
  EXPECT_EQ(triage.processes[1].threads[0].other_end_pids, std::vector<int64_t>{1000});
}

TEST(TriageProcessCycles, PipeEndsOfAnotherPipeOrTheSameEndCloseNothing) {
  std::vector<ProcessRecord> records = pipe_job({});
  records[1].threads[0].blocked_fd = 1;
  records[1].pipe_ends = {{1, 77, false}};
  records[0].pipe_ends = {{3, 78, true}, {4, 77, false}};  // another pipe's read end, the same end
  Triage triage = merge(records);
  EXPECT_TRUE(triage.processes[1].threads[0].other_end_pids.empty());
  EXPECT_EQ(triage.verdict.text.find("each waits"), std::string::npos);
  // The same pipe's read end, but on another host: inodes name pipes of one machine.
  records[0].pipe_ends = {{3, 77, true}};
  records[0].labels.host = "node2";
  EXPECT_EQ(merge(records).verdict.text.find("each waits"), std::string::npos);
}

// A client waiting on a connection whose other end a server holds, the server's handler on a
// lock: two groups of one, which no vote tells apart; the chain over the connection names the
// server, first, and marks it alone as odd.
TEST(TriageProcessChains, AClientsConnectionLeadsToTheServer) {
  std::vector<ProcessRecord> records = job(2, {}, /*with_ranks=*/false);
  for (ProcessRecord& record : records) record.threads.resize(1);
  ThreadRecord& server = records[0].threads[0];
  server.python_frames = {Frame{Frame::Kind::kPython, "do_GET", "/srv/server.py", 42}};
  server.blocked_kind = "lock";
  server.blocked_description = "Lock 0x10 (owner unknown)";
  records[0].socket_ends = {{7, "127.0.0.1:8000", "127.0.0.1:41000"}, {9, "127.0.0.1:8000", "127.0.0.1:41002"}};
  ThreadRecord& client = records[1].threads[0];
  client.python_frames = {Frame{Frame::Kind::kPython, "fetch", "/srv/client.py", 12},
                          Frame{Frame::Kind::kPython, "SocketIO.readinto", "/usr/lib/python3.11/socket.py", 706}};
  client.blocked_kind = "socket";
  client.blocked_fd = 3;
  records[1].socket_ends = {{3, "127.0.0.1:41000", "127.0.0.1:8000"}};
  Triage triage = merge(records);
  ASSERT_FALSE(triage.verdict.lines.empty());
  EXPECT_EQ(triage.verdict.lines[0],
            "wait chain: process 1 (PID 1001) waits in `SocketIO.readinto` at client.py:12 on a connection whose other "
            "end only process 0 holds; where it ends: process 0 (PID 1000) in `do_GET` at server.py:42, waiting for "
            "Lock 0x10 (owner unknown)");
  EXPECT_EQ(triage.verdict.text.find("no single odd one out"), std::string::npos) << triage.verdict.text;
  EXPECT_TRUE(triage.classes[triage.class_of[0]].outlier);
  EXPECT_FALSE(triage.classes[triage.class_of[1]].outlier);
  // Another client's connection (41002) is no match for this one.
  records[1].socket_ends = {{3, "127.0.0.1:41001", "127.0.0.1:8000"}};
  Triage unmatched = merge(records);
  EXPECT_NE(unmatched.verdict.text.find("no single odd one out"), std::string::npos) << unmatched.verdict.text;
}

// gcores hold no descriptor table: a parent waiting in subprocess's wait whose Popen reads the
// child's stdout (child_pipe_fds) holds the read end of the child's fd 1.
TEST(TriageProcessCycles, PopenStdoutClosesTheCycleWithoutDescriptorTables) {
  std::vector<ProcessRecord> records = pipe_job({});
  records[1].threads[0].blocked_fd = 1;
  records[0].threads[0].child_pipe_fds = {1};
  Triage triage = merge(records);
  ASSERT_FALSE(triage.verdict.lines.empty());
  EXPECT_EQ(triage.verdict.lines[0].rfind("each waits for the other: ", 0), 0u) << triage.verdict.text;
  // The child writes its stderr, which the parent does not read: no cycle.
  records[1].threads[0].blocked_fd = 2;
  EXPECT_EQ(merge(records).verdict.text.find("each waits"), std::string::npos);
  // Not its parent: no cycle.
  records[1].threads[0].blocked_fd = 1;
  records[1].labels.ppid = 999;
  EXPECT_EQ(merge(records).verdict.text.find("each waits"), std::string::npos);
}
