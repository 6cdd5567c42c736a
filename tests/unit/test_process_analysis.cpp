// analysis::analyse_process over a ProcessTarget (its facts its own) on recorded targets: the
// corpus's snapshot cores of deadlock.py (the
// committed cores of real processes, each with the ground truth the interpreter wrote before it
// blocked). One pipeline for every target: the stacks, then the native step when given (once,
// with those stacks, its stacks handed to the details), the details (locals when asked, the
// diagnosis: the two workers' lock cycle and the locks each holds), and the native stacks for the
// diagnosis only where the diagnosis leaves a thread vague.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/process_analysis.h"
#include "targets/core_target.h"

using namespace hangpy;

namespace {

const std::filesystem::path kCorpus = std::filesystem::path(HANGPY_TEST_DATA_DIR) / ".." / "corpus";

// A corpus snapshot of deadlock.py, inflated, opened, with its truth.
class DeadlockSnapshot {
 public:
  explicit DeadlockSnapshot(const std::string& interpreter) {
    source_ = kCorpus / interpreter / "deadlock.core.zst";
    core_ = std::filesystem::temp_directory_path() / ("hangpy-analysis-" + interpreter + ".core");
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

class ProcessAnalysisOfDeadlock : public ::testing::TestWithParam<std::string> {};

TEST_P(ProcessAnalysisOfDeadlock, StacksThenDetailsAsTheInterpreterSaw) {
  DeadlockSnapshot snapshot(GetParam());
  if (std::string why = snapshot.open(); !why.empty()) GTEST_SKIP() << why;
  const nlohmann::json& truth = snapshot.truth();

  analysis::Request request;
  request.locals = true;
  size_t native_steps = 0;
  native::MergedStacks given;
  given.emplace(-1, native::MergedStack{});  // a marker the details must be handed
  analysis::NativeStep native = [&](const cpython::ProcessStacks& stacks) -> std::optional<native::MergedStacks> {
    ++native_steps;
    EXPECT_EQ(stacks.threads.size(), truth["threads"].size());  // called with the stacks just read
    return given;
  };
  size_t for_diagnosis_calls = 0;
  analysis::NativeForDiagnosis for_diagnosis = [&](const cpython::ProcessStacks&, const std::set<int64_t>&) {
    ++for_diagnosis_calls;
    return std::optional<native::MergedStacks>();
  };

  const analysis::ProcessAnalysis analysis =
      analysis::analyse_process(snapshot.target(), request, native, for_diagnosis);
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

  // The native step ran once, and its stacks are the ones the analysis kept; none was needed for
  // the diagnosis alone then.
  EXPECT_EQ(native_steps, 1u);
  ASSERT_TRUE(analysis.native.has_value());
  EXPECT_TRUE(analysis.native->contains(-1));
  EXPECT_EQ(for_diagnosis_calls, 0u);
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
  std::set<int64_t> asked;
  analysis::NativeForDiagnosis for_diagnosis = [&](const cpython::ProcessStacks&, const std::set<int64_t>& lwps) {
    asked.insert(lwps.begin(), lwps.end());
    return std::optional<native::MergedStacks>();
  };
  const analysis::ProcessAnalysis analysis =
      analysis::analyse_process(snapshot.target(), analysis::Request{}, {}, for_diagnosis);
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

INSTANTIATE_TEST_SUITE_P(Corpus, ProcessAnalysisOfDeadlock,
                         ::testing::Values("debian-3.11", "pyenv-2.7", "pyenv-3.8", "pyenv-3.12", "pyenv-3.13"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name)
                             if (c == '-' || c == '.') c = '_';
                           return name;
                         });

}  // namespace
