// The two implementations of cpython::Target that coreanalyze has, each through the interface
// alone, on a real process: CoreTarget on the bundled example (a snapshot core of Debian's
// python3.11 with two deadlocked threads; its ground truth in examples/deadlock.truth.json) and
// LiveTarget on a child of this test, blocked in read(2).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "inputs/core_input.h"
#include "targets/core_target.h"
#include "targets/live_target.h"
#include "cpython/analyzer.h"

extern "C" __attribute__((noinline, used)) int hangpy_target_test_marker() { return 42; }

namespace hangpy::targets {
using namespace ::hangpy::inputs;
namespace {

const std::filesystem::path kExamples = std::filesystem::path(HANGPY_TEST_DATA_DIR) / ".." / ".." / "examples";

TEST(CoreTargetInterface, TheExampleSnapshotReadsAsItsGroundTruth) {
  auto input = unwrap_core_input((kExamples / "deadlock.core.zst").string(), "deadlock.core.zst");
  ASSERT_TRUE(input) << input.error().describe();
  CoreOptions options;
  options.core_path = input->core_path;
  options.sysroot = "/nonexistent-hangpy-unit-sysroot";  // the snapshot needs no binaries
  auto opened = CoreTarget::open(options);
  ASSERT_TRUE(opened) << opened.error().describe();
  const cpython::Target& target = **opened;

  std::ifstream stream(kExamples / "deadlock.truth.json");
  const auto truth = nlohmann::json::parse(stream);
  std::set<int64_t> want;
  for (int64_t lwp : truth["os_threads"]) want.insert(lwp);
  want.erase(truth["reporter_native_id"].get<int64_t>());  // it ended before the core
  std::set<int64_t> got;
  for (const cpython::NativeThread& thread : target.threads()) {
    got.insert(thread.lwp);
    EXPECT_NE(thread.fs_base, 0u) << "LWP " << thread.lwp;
  }
  EXPECT_EQ(got, want);

  // Symbols come from the snapshot's note; memory from its segments, and a page it does not hold
  // is an error, never zeros.
  auto runtime = target.find_symbol("_PyRuntime");
  ASSERT_TRUE(runtime.has_value());
  std::array<std::byte, 8> bytes{};
  EXPECT_TRUE(target.memory().read(*runtime, bytes));
  EXPECT_FALSE(target.memory().read(0x1000, bytes));
  EXPECT_FALSE(target.modules().empty());

  auto stacks = cpython::analyze(target, {});
  ASSERT_TRUE(stacks) << stacks.error().describe();
  EXPECT_EQ(stacks->threads.size(), truth["threads"].size());
}

TEST(LiveTargetInterface, AChildBlockedInReadIsReadThroughTheInterface) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  static volatile uint64_t marker = 0;
  marker = 0x6861'6e67'7079'2121;  // the child has the same value at the same address
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char byte;
    [[maybe_unused]] ssize_t got = read(fds[0], &byte, 1);
    _exit(0);
  }
  auto opened = LiveTarget::open(child);
  ASSERT_TRUE(opened) << opened.error().message;
  const LiveTarget& live = **opened;
  const cpython::Target& target = live;
  EXPECT_EQ(live.process().pid, child);

  const auto threads = target.threads();
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0].lwp, child);

  std::array<std::byte, 8> bytes{};
  ASSERT_TRUE(target.memory().read(reinterpret_cast<uint64_t>(&marker), bytes));
  uint64_t value = 0;
  std::memcpy(&value, bytes.data(), sizeof value);
  EXPECT_EQ(value, marker);

  // The test binary's own symbol, found in the child's mapping of it.
  auto symbol = target.find_symbol("hangpy_target_test_marker");
  ASSERT_TRUE(symbol.has_value());
  EXPECT_EQ(*symbol, reinterpret_cast<uint64_t>(&hangpy_target_test_marker));
  const auto modules = target.modules();
  EXPECT_TRUE(std::any_of(modules.begin(), modules.end(), [](const cpython::MappedModule& m) {
    return m.start <= reinterpret_cast<uint64_t>(&hangpy_target_test_marker) &&
           reinterpret_cast<uint64_t>(&hangpy_target_test_marker) < m.end;
  }));

  ASSERT_EQ(write(fds[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace hangpy::targets
