// A CPython newer than every compiled table must still be read through its _Py_DebugOffsets.
// Stand-in for "newer": the real 3.15 process of the corpus (Debian sid's 3.15.2), read with a
// layout derived from the 3.14 table plus the process's own debug offsets, never the 3.15 table.
// Its frames must equal what the interpreter itself wrote (the snapshot's ground truth).
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "targets/core_target.h"
#include "cpython/debug_offsets.h"
#include "cpython/layouts/all_layouts.h"
#include "cpython/stack_walker.h"

using namespace hangpy;
using namespace hangpy::cpython;

namespace {

TEST(NewerThanEveryTable, DebugOffsetsOverAnOlderTableReadThe315Process) {
  auto corpus = std::filesystem::path(HANGPY_TEST_DATA_DIR) / ".." / "corpus" / "sid-3.15";
  if (!std::filesystem::exists(corpus / "deadlock.core.zst")) GTEST_SKIP() << "no 3.15 snapshot";
  auto core = std::filesystem::temp_directory_path() / ("hangpy-test-315-" + std::to_string(::getpid()) + ".core");
  std::string command = "zstd -q -d -f '" + (corpus / "deadlock.core.zst").string() + "' -o '" +
                        core.string() + "'";
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "zstd failed";
  targets::CoreOptions options;
  options.core_path = core.string();
  auto target = targets::CoreTarget::open(options);
  std::filesystem::remove(core);  // the core is mapped: its pages stay readable
  ASSERT_TRUE(target) << target.error().describe();

  auto runtime = (*target)->find_symbol("_PyRuntime");
  ASSERT_TRUE(runtime);
  auto offsets = read_debug_offsets((*target)->memory(), *runtime);
  ASSERT_TRUE(offsets) << offsets.error().describe();
  EXPECT_EQ(offsets->version_hex >> 16, 0x030fu);
  const Layout* older = find_layout(3, 14, false);
  ASSERT_NE(older, nullptr);
  std::vector<std::string> differences;
  Layout derived = layout_from_debug_offsets(*offsets, *older, differences);
  EXPECT_FALSE(differences.empty());  // 3.15 moved fields: the derived layout is not 3.14's

  auto interpreter = read_pointer((*target)->memory(),
                                  *runtime + static_cast<uint64_t>(derived.runtime.interpreters_head));
  ASSERT_TRUE(interpreter);
  StackWalker walker((*target)->memory(), derived);
  std::vector<std::string> warnings;
  auto threads = walker.walk_interpreters(*interpreter, warnings);
  EXPECT_TRUE(warnings.empty());

  std::ifstream truth_stream(corpus / "deadlock.truth.json");
  auto truth = nlohmann::json::parse(truth_stream);
  ASSERT_EQ(threads.size(), truth["threads"].size());
  for (const PythonThread& thread : threads) {
    const auto& expected = truth["threads"][std::to_string(thread.thread_id)]["frames"];
    ASSERT_EQ(thread.frames.size(), expected.size()) << "thread " << thread.thread_id;
    EXPECT_FALSE(thread.error.has_value());
    for (size_t i = 0; i < expected.size(); ++i) {
      const PythonFrame& frame = thread.frames[thread.frames.size() - 1 - i];  // outermost first
      EXPECT_EQ(frame.file, expected[i][0].get<std::string>());
      EXPECT_EQ(frame.line, expected[i][1].get<int>());
      EXPECT_EQ(frame.function, expected[i][2].get<std::string>());
    }
  }
}

}  // namespace
