// analysis::analyse_process over a ProcessTarget on recorded targets: the corpus's snapshot cores
// of deadlock.py (the committed cores of real processes, each with the ground truth the
// interpreter wrote before it blocked), seen through ObservedTarget, which passes every read to
// the core and counts what the pipeline asks of a target (its unwinder, its hold). One pipeline
// for every target: the stacks, then the native stacks when asked (one session, its stacks handed
// to the details), the details (locals when asked, the diagnosis: the two workers' lock cycle and
// the locks each holds), the native stacks for the diagnosis only where it leaves a thread vague;
// and for a target that runs, a warm pass, then the stacks read while it is held, again when a
// thread woke meanwhile, and nothing kept from a hold past its limit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <expected>
#include <functional>
#include <memory>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/process_analysis.h"
#include "cpython/thread_names.h"
#include "targets/core_target.h"

using namespace hangpy;

namespace {

const std::filesystem::path kCorpus = std::filesystem::path(HANGPY_TEST_DATA_DIR) / ".." / "corpus";

// A corpus snapshot of deadlock.py, inflated, opened, with its truth.
class DeadlockSnapshot {
 public:
  explicit DeadlockSnapshot(const std::string& interpreter) {
    source_ = kCorpus / interpreter / "deadlock.core.zst";
    core_ = std::filesystem::temp_directory_path() / ("hangpy-analysis-" + interpreter + "-" + std::to_string(::getpid()) + ".core");
  }
  ~DeadlockSnapshot() { std::filesystem::remove(core_); }

  // Why it cannot be opened here, or empty.
  std::string open() {
    if (!std::filesystem::exists(source_)) return source_.string() + " is not in the corpus";
    if (std::system("zstd --version >/dev/null 2>&1") != 0) return "zstd is not installed";
    const std::string command = "zstd -q -d -f '" + source_.string() + "' -o '" + core_.string() + "'";
    if (std::system(command.c_str()) != 0) return "zstd failed";
    targets::CoreOptions options;
    options.core_path = core_.string();
    auto target = targets::CoreTarget::open(options);
    if (!target) return target.error().describe();
    target_ = std::move(*target);
    std::ifstream truth_file(kCorpus / source_.parent_path().filename() / "deadlock.truth.json");
    truth_ = nlohmann::json::parse(truth_file, nullptr, false);
    return truth_.is_discarded() ? "no truth beside the core" : "";
  }

  const targets::CoreTarget& target() const { return *target_; }
  const nlohmann::json& truth() const { return truth_; }

 private:
  std::filesystem::path source_, core_;
  std::unique_ptr<targets::CoreTarget> target_;
  nlohmann::json truth_;
};

// The core target, every read passed through; its unwinder and its hold are the test's.
class ObservedTarget final : public analysis::ProcessTarget {
 public:
  // What merged() returns: a marker thread (-1) the details must be handed, when `mark`.
  class Unwinding final : public analysis::NativeUnwinding {
   public:
    explicit Unwinding(const ObservedTarget& owner) : owner_(owner) {}
    void walk() override { ++owner_.walks; }
    native::MergedStacks merged(const cpython::ProcessStacks& stacks, bool, const std::set<int64_t>* only) override {
      ++owner_.merges;
      owner_.stacks_merged = stacks.threads.size();
      if (only != nullptr) owner_.asked.insert(only->begin(), only->end());
      native::MergedStacks merged;
      if (owner_.mark) merged.emplace(-1, native::MergedStack{});
      return merged;
    }

   private:
    const ObservedTarget& owner_;
  };

  // A hold that says, pass by pass, which threads woke while read, and whether it ran too long.
  class Hold final : public analysis::Hold {
   public:
    Hold(std::vector<int64_t> moved, bool timed_out) : moved_(std::move(moved)), timed_out_(timed_out) {}
    Threads threads() const override { return {3, 1, 0}; }
    bool timed_out() const override { return timed_out_; }
    analysis::HoldFailure timeout_failure() const override {
      return {analysis::HoldFailure::Kind::kStopTimeout, "held past its limit"};
    }
    std::chrono::nanoseconds release() override { return std::chrono::microseconds(250); }
    std::vector<int64_t> moved() const override { return moved_; }
    bool realtime() const override { return false; }

   private:
    std::vector<int64_t> moved_;
    bool timed_out_;
  };

  explicit ObservedTarget(const targets::CoreTarget& inner) : inner_(inner) {}
  const cpython::AddressSpace& memory() const override { return inner_.memory(); }
  std::optional<uint64_t> find_symbol(std::string_view name) const override { return inner_.find_symbol(name); }
  std::optional<uint64_t> find_section(std::string_view name) const override { return inner_.find_section(name); }
  std::vector<cpython::NativeThread> threads() const override { return inner_.threads(); }
  std::vector<cpython::MappedModule> modules() const override { return inner_.modules(); }
  std::vector<cpython::MemoryRange> writable_ranges() const override { return inner_.writable_ranges(); }
  analysis::TargetFacts facts() const override { return inner_.facts(); }
  cpython::ProcessEnvironment environment() const override { return inner_.environment(); }
  std::unique_ptr<analysis::NativeUnwinding> native_unwinding(bool) const override {
    ++unwindings;
    return std::make_unique<Unwinding>(*this);
  }
  void prepare_hold(const cpython::ProcessStacks& first, bool, const std::function<void()>& read_details) override {
    prepared_with = first.threads.size();
    read_details();
  }
  std::expected<std::unique_ptr<analysis::Hold>, analysis::HoldFailure> hold(const analysis::HoldOptions&) override {
    const size_t pass = holds++;
    if (pass >= passes.size()) return std::unique_ptr<analysis::Hold>();
    return std::make_unique<Hold>(passes[pass], pass == timed_out_pass);
  }

  bool mark = true;
  std::vector<std::vector<int64_t>> passes;  // each hold's woken threads
  size_t timed_out_pass = SIZE_MAX;
  mutable size_t unwindings = 0, walks = 0, merges = 0, stacks_merged = 0, holds = 0;
  std::optional<size_t> prepared_with;
  mutable std::set<int64_t> asked;

 private:
  const targets::CoreTarget& inner_;
};

class ProcessAnalysisOfDeadlock : public ::testing::TestWithParam<std::string> {};

TEST_P(ProcessAnalysisOfDeadlock, StacksThenDetailsAsTheInterpreterSaw) {
  DeadlockSnapshot snapshot(GetParam());
  if (std::string why = snapshot.open(); !why.empty()) GTEST_SKIP() << why;
  const nlohmann::json& truth = snapshot.truth();

  analysis::Request request;
  request.locals = true;
  request.native = true;
  ObservedTarget target(snapshot.target());
  const analysis::ProcessAnalysis analysis = analysis::analyse_process(target, request);
  ASSERT_TRUE(analysis.stacks) << analysis.stacks.error().describe();
  const cpython::ProcessStacks& stacks = *analysis.stacks;

  // The stacks: every thread the interpreter listed, each frame (file, line, function) as
  // traceback gave it, innermost last there.
  ASSERT_EQ(stacks.threads.size(), truth["threads"].size());
  for (const cpython::PythonThread& thread : stacks.threads) {
    const std::string ident = std::to_string(thread.thread_id);
    ASSERT_TRUE(truth["threads"].contains(ident)) << "thread " << ident << " is not the interpreter's";
    const nlohmann::json& frames = truth["threads"][ident]["frames"];
    ASSERT_EQ(thread.frames.size(), frames.size()) << "thread " << ident;
    for (size_t i = 0; i < frames.size(); ++i) {
      const cpython::PythonFrame& frame = thread.frames[frames.size() - 1 - i];
      EXPECT_EQ(frame.file, frames[i][0].get<std::string>());
      EXPECT_EQ(frame.line, frames[i][1].get<int>());
      EXPECT_EQ(frame.function, frames[i][2].get<std::string>());
    }
  }

  // One unwinding session, asked once with the stacks just read, whose stacks the analysis kept;
  // none was needed for the diagnosis alone then. A core stands still: no walk, no hold.
  EXPECT_EQ(target.unwindings, 1u);
  EXPECT_EQ(target.merges, 1u);
  EXPECT_EQ(target.stacks_merged, truth["threads"].size());
  EXPECT_EQ(target.walks, 0u);
  EXPECT_EQ(target.holds, 0u);
  EXPECT_EQ(analysis.held.reads, 1);
  EXPECT_TRUE(analysis.held.stops.empty());
  ASSERT_TRUE(analysis.native.has_value());
  EXPECT_TRUE(analysis.native->contains(-1));
  EXPECT_FALSE(analysis.native_for_diagnosis.has_value());

  // The details: locals for every thread, and the diagnosis of the interpreter's own deadlock.
  ASSERT_TRUE(analysis.details.locals.has_value());
  const diagnosis::ProcessDiagnosis& diagnosis = analysis.details.diagnosis;
  ASSERT_EQ(diagnosis.threads.size(), stacks.threads.size());
  ASSERT_EQ(diagnosis.cycles.size(), truth["deadlocks"].size());
  std::set<int64_t> in_cycle, expected_in_cycle;
  for (size_t index : diagnosis.cycles.at(0).threads)
    in_cycle.insert(static_cast<int64_t>(stacks.threads.at(index).native_thread_id.value_or(0)));
  for (const auto& lwp : truth["deadlocks"][0]) expected_in_cycle.insert(lwp.get<int64_t>());
  if (stacks.threads.front().native_thread_id) {  // 2.7's thread states name no LWP
    EXPECT_EQ(in_cycle, expected_in_cycle);
  }
  for (size_t i = 0; i < stacks.threads.size(); ++i) {
    const std::string ident = std::to_string(stacks.threads[i].thread_id);
    std::set<uint64_t> expected_held;
    if (truth["held_locks"].contains(ident))
      for (const auto& lock : truth["held_locks"][ident])
        expected_held.insert(std::stoull(lock.get<std::string>(), nullptr, 16));
    const std::set<uint64_t> held(diagnosis.threads[i].held_locks.begin(), diagnosis.threads[i].held_locks.end());
    EXPECT_EQ(held, expected_held) << "thread " << ident;
  }
}

// Without a native step, the diagnosis asks for native stacks only for the threads it leaves
// vague: in a deadlock of Python locks every thread's wait is named, and none is asked for.
TEST_P(ProcessAnalysisOfDeadlock, NoNativeStacksForWaitsTheDiagnosisNames) {
  DeadlockSnapshot snapshot(GetParam());
  if (std::string why = snapshot.open(); !why.empty()) GTEST_SKIP() << why;
  ObservedTarget target(snapshot.target());
  target.mark = false;  // nothing unwound: the diagnosis stays its own
  const analysis::ProcessAnalysis analysis = analysis::analyse_process(target, analysis::Request{});
  const std::set<int64_t>& asked = target.asked;
  ASSERT_TRUE(analysis.stacks) << analysis.stacks.error().describe();
  EXPECT_FALSE(analysis.details.locals.has_value());  // not asked for
  const std::set<int64_t> vague = analysis::vague_threads(*analysis.stacks, analysis.details.diagnosis);
  EXPECT_EQ(asked, vague);
  for (size_t index : analysis.details.diagnosis.cycles.at(0).threads) {
    const auto& lwp = analysis.stacks->threads.at(index).native_thread_id;
    if (lwp) {
      EXPECT_FALSE(asked.contains(static_cast<int64_t>(*lwp))) << "a deadlocked thread's wait is named";
    }
  }
}

// The same deadlock as if its threads ran torch's Python code (every frame's file moved under a
// torch/ directory; the memory is the interpreter's own): a diagnosis that native stacks follow
// leaves the workers' futex waits vague for them (a torch rank's are nearly always a collective
// that only native frames name) and reads no candidate lock; and where no native stack comes (a
// target that unwinds nothing) the analysis searches the locks itself: the interpreter's cycle.
TEST_P(ProcessAnalysisOfDeadlock, LockSearchInTorchCodeWaitsForNativeStacks) {
  DeadlockSnapshot snapshot(GetParam());
  if (std::string why = snapshot.open(); !why.empty()) GTEST_SKIP() << why;
  auto read = cpython::analyze(snapshot.target(), cpython::AnalyzeOptions{});
  ASSERT_TRUE(read) << read.error().describe();
  cpython::ProcessStacks stacks = std::move(*read);
  if (!stacks.threads.front().native_thread_id) GTEST_SKIP() << "2.7's thread states name no LWP";
  for (cpython::PythonThread& thread : stacks.threads)
    for (cpython::PythonFrame& frame : thread.frames) frame.file = "/usr/lib/python3/dist-packages/torch" + frame.file;
  std::set<int64_t> expected_in_cycle;
  for (const auto& lwp : snapshot.truth()["deadlocks"][0]) expected_in_cycle.insert(lwp.get<int64_t>());

  diagnosis::DiagnosisInput input;
  input.stacks = &stacks;
  input.memory = &snapshot.target().memory();
  input.os_threads = snapshot.target().threads();
  input.pid = snapshot.target().process().pid;
  diagnosis::DiagnosisMemo memo;
  input.memo = &memo;
  input.native_stacks_follow = true;
  const diagnosis::ProcessDiagnosis first = diagnosis::diagnose(input);
  std::set<int64_t> deferred;
  for (size_t i = 0; i < first.threads.size(); ++i) {
    if (!first.threads[i].lock_search_deferred) continue;
    deferred.insert(static_cast<int64_t>(stacks.threads[i].native_thread_id.value_or(0)));
    EXPECT_EQ(first.threads[i].blocked_on.kind, diagnosis::WaitKind::kSyscall);
  }
  EXPECT_EQ(deferred, expected_in_cycle);
  EXPECT_TRUE(first.cycles.empty());
  EXPECT_FALSE(memo.candidate_locks.has_value()) << "the candidate locks were read";
  EXPECT_EQ(analysis::vague_threads(stacks, first), expected_in_cycle);

  ObservedTarget target(snapshot.target());
  target.mark = false;  // unwinds nothing
  const diagnosis::ProcessDiagnosis final = analysis::diagnose_threads_of(target, stacks);
  EXPECT_EQ(target.asked, expected_in_cycle);
  ASSERT_EQ(final.cycles.size(), 1u);
  std::set<int64_t> in_cycle;
  for (size_t index : final.cycles[0].threads)
    in_cycle.insert(static_cast<int64_t>(stacks.threads.at(index).native_thread_id.value_or(0)));
  EXPECT_EQ(in_cycle, expected_in_cycle);
  for (const diagnosis::ThreadDiagnosis& thread : final.threads) EXPECT_FALSE(thread.lock_search_deferred);
}

// What a read keeps for the diagnosis is what the diagnosis would read anew: threading's Thread
// objects as naming the threads found them (ProcessStacks::thread_objects), and each thread's
// locks held through a `with`, kept in the memo by the first diagnosis for the second (made with
// native stacks). Both are the interpreter's truth here (the workers' held locks), and a
// diagnosis given them answers as one that reads everything itself.
TEST_P(ProcessAnalysisOfDeadlock, KeptThreadObjectsAndHeldLocksAnswerAsReadAnew) {
  DeadlockSnapshot snapshot(GetParam());
  if (std::string why = snapshot.open(); !why.empty()) GTEST_SKIP() << why;
  auto read = cpython::analyze(snapshot.target(), cpython::AnalyzeOptions{});
  ASSERT_TRUE(read) << read.error().describe();
  const cpython::ProcessStacks stacks = std::move(*read);
  ASSERT_TRUE(stacks.thread_objects.has_value());
  EXPECT_EQ(*stacks.thread_objects, cpython::read_thread_objects(snapshot.target().memory(), *stacks.layout,
                                                                 stacks.threads.front().interpreter, stacks.threads));
  EXPECT_EQ(stacks.thread_objects->size(), snapshot.truth()["threads"].size());

  auto diagnose = [&](const cpython::ProcessStacks& given, diagnosis::DiagnosisMemo* memo) {
    diagnosis::DiagnosisInput input;
    input.stacks = &given;
    input.memory = &snapshot.target().memory();
    input.os_threads = snapshot.target().threads();
    input.pid = snapshot.target().process().pid;
    input.memo = memo;
    return diagnosis::diagnose(input);
  };
  cpython::ProcessStacks without = stacks;
  without.thread_objects.reset();
  const diagnosis::ProcessDiagnosis anew = diagnose(without, nullptr);
  diagnosis::DiagnosisMemo memo;
  const diagnosis::ProcessDiagnosis first = diagnose(stacks, &memo);
  ASSERT_TRUE(memo.held_through_with.has_value());
  ASSERT_EQ(memo.held_through_with->size(), stacks.threads.size());
  const diagnosis::ProcessDiagnosis second = diagnose(stacks, &memo);
  for (size_t i = 0; i < stacks.threads.size(); ++i) {
    const std::string ident = std::to_string(stacks.threads[i].thread_id);
    std::set<uint64_t> expected_held;
    if (snapshot.truth()["held_locks"].contains(ident))
      for (const auto& lock : snapshot.truth()["held_locks"][ident])
        expected_held.insert(std::stoull(lock.get<std::string>(), nullptr, 16));
    // Kept as the frames show them: a `with` acquiring the waited lock has pushed its __exit__
    // already (the diagnosis takes that one out); a join's wait is no `with`.
    const std::vector<uint64_t>& kept = (*memo.held_through_with)[i];
    std::set<uint64_t> kept_but_waited(kept.begin(), kept.end());
    for (uint64_t lock : expected_held) EXPECT_EQ(kept_but_waited.erase(lock), 1u) << "thread " << ident;
    if (anew.threads.at(i).blocked_on.object) kept_but_waited.erase(*anew.threads.at(i).blocked_on.object);
    EXPECT_TRUE(kept_but_waited.empty()) << "thread " << ident;
    for (const diagnosis::ProcessDiagnosis* other : {&first, &second}) {
      const diagnosis::ThreadDiagnosis& a = anew.threads.at(i);
      const diagnosis::ThreadDiagnosis& b = other->threads.at(i);
      EXPECT_EQ(a.held_locks, b.held_locks) << "thread " << ident;
      EXPECT_EQ(a.blocked_on.kind, b.blocked_on.kind) << "thread " << ident;
      EXPECT_EQ(a.blocked_on.what, b.blocked_on.what) << "thread " << ident;
      EXPECT_EQ(a.blocked_on.object, b.blocked_on.object) << "thread " << ident;
      EXPECT_EQ(a.blocked_on.owner, b.blocked_on.owner) << "thread " << ident;
      EXPECT_EQ(a.daemon, b.daemon) << "thread " << ident;
    }
  }
  ASSERT_EQ(anew.cycles.size(), snapshot.truth()["deadlocks"].size());
  for (const diagnosis::ProcessDiagnosis* other : {&first, &second}) {
    ASSERT_EQ(other->cycles.size(), anew.cycles.size());
    for (size_t c = 0; c < anew.cycles.size(); ++c) {
      EXPECT_EQ(other->cycles[c].threads, anew.cycles[c].threads);
      EXPECT_EQ(other->cycles[c].text, anew.cycles[c].text);
    }
  }
}

// A target that runs: read once as it runs, then held; a thread that woke while its stack was
// read makes the stacks be read again, under a new hold, and walked again while held.
TEST_P(ProcessAnalysisOfDeadlock, ReadAgainUnderANewHoldWhenAThreadWoke) {
  DeadlockSnapshot snapshot(GetParam());
  if (std::string why = snapshot.open(); !why.empty()) GTEST_SKIP() << why;
  ObservedTarget target(snapshot.target());
  target.passes = {{4242}, {}};  // the first pass's reads were torn by thread 4242 waking
  analysis::Request request;
  request.native = true;
  request.hold = analysis::HoldOptions{};
  const analysis::ProcessAnalysis analysis = analysis::analyse_process(target, request);
  ASSERT_FALSE(analysis.failure.has_value());
  ASSERT_TRUE(analysis.stacks) << analysis.stacks.error().describe();
  ASSERT_TRUE(target.prepared_with.has_value());  // the warm pass, before any hold
  EXPECT_EQ(*target.prepared_with, analysis.stacks->threads.size());
  EXPECT_EQ(target.holds, 2u);
  EXPECT_EQ(analysis.held.reads, 2);
  EXPECT_EQ(analysis.held.stops.size(), 2u);
  EXPECT_EQ(target.walks, 2u);  // each pass's stacks walked while held
  EXPECT_TRUE(analysis.held.moved.empty());  // the last pass's: none woke
  EXPECT_EQ(analysis.held.threads.stopped, 3u);
  EXPECT_EQ(analysis.held.threads.in_syscall, 1u);
  EXPECT_TRUE(analysis.held.taken_at.has_value());
  ASSERT_TRUE(analysis.native.has_value());
  EXPECT_TRUE(analysis.native->contains(-1));
  EXPECT_FALSE(analysis.details.diagnosis.cycles.empty());  // read after the last hold
}

// A hold past its limit keeps nothing: the failure says why, and no stack stands.
TEST_P(ProcessAnalysisOfDeadlock, NothingKeptFromAHoldPastItsLimit) {
  DeadlockSnapshot snapshot(GetParam());
  if (std::string why = snapshot.open(); !why.empty()) GTEST_SKIP() << why;
  ObservedTarget target(snapshot.target());
  target.passes = {{}};
  target.timed_out_pass = 0;
  analysis::Request request;
  request.hold = analysis::HoldOptions{};
  const analysis::ProcessAnalysis analysis = analysis::analyse_process(target, request);
  ASSERT_TRUE(analysis.failure.has_value());
  EXPECT_EQ(analysis.failure->kind, analysis::HoldFailure::Kind::kStopTimeout);
  EXPECT_FALSE(analysis.stacks.has_value());
  EXPECT_TRUE(analysis.details.diagnosis.threads.empty());
  EXPECT_EQ(target.unwindings, 0u);
}

// The stacks alone (gdb's cache): the same stacks, and nothing read after them.
TEST_P(ProcessAnalysisOfDeadlock, StacksAloneForAShellThatReadsTheRestItself) {
  DeadlockSnapshot snapshot(GetParam());
  if (std::string why = snapshot.open(); !why.empty()) GTEST_SKIP() << why;
  ObservedTarget target(snapshot.target());
  analysis::Request request;
  request.stacks_only = true;
  request.locals = true;
  const analysis::ProcessAnalysis analysis = analysis::analyse_process(target, request);
  ASSERT_TRUE(analysis.stacks) << analysis.stacks.error().describe();
  EXPECT_EQ(analysis.stacks->threads.size(), snapshot.truth()["threads"].size());
  EXPECT_TRUE(analysis.details.diagnosis.threads.empty());
  EXPECT_FALSE(analysis.details.locals.has_value());
  EXPECT_FALSE(analysis.details.tasks.has_value());
  EXPECT_EQ(target.unwindings, 0u);
  EXPECT_TRUE(analysis.environment.source.empty());
  // The parts, asked afterwards, find the deadlock the whole analysis finds.
  EXPECT_EQ(analysis::diagnose_threads_of(target, *analysis.stacks).cycles.size(),
            snapshot.truth()["deadlocks"].size());
}

INSTANTIATE_TEST_SUITE_P(Corpus, ProcessAnalysisOfDeadlock,
                         ::testing::Values("debian-3.11", "pyenv-2.7", "pyenv-3.8", "pyenv-3.12", "pyenv-3.13"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name)
                             if (c == '-' || c == '.') c = '_';
                           return name;
                         });

}  // namespace
