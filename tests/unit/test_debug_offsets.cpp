// _Py_DebugOffsets read from real processes (committed snapshots of the corpus), checked against
// our compiled tables: every table of 3.13 on must agree with the offsets each real process of its
// version states. Validation is tested on a 3.13 snapshot with one field broken.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <unistd.h>

#include "targets/core_target.h"
#include "cpython/debug_offsets.h"
#include "cpython/layouts/all_layouts.h"

using namespace hangpy;
using namespace hangpy::cpython;

namespace {

// Forwards reads, except that it replaces 8 bytes at one address.
class PatchedMemory : public AddressSpace {
 public:
  PatchedMemory(const AddressSpace& inner, uint64_t address, uint64_t value)
      : inner_(inner), address_(address), value_(value) {}
  Expected<void> read(uint64_t address, std::span<std::byte> out) const override {
    if (auto ok = inner_.read(address, out); !ok) return ok;
    for (size_t i = 0; i < sizeof(value_); ++i) {
      uint64_t at = address_ + i;
      if (at >= address && at < address + out.size())
        out[at - address] = static_cast<std::byte>(value_ >> (8 * i));
    }
    return {};
  }

 private:
  const AddressSpace& inner_;
  uint64_t address_;
  uint64_t value_;
};

class DebugOffsetsOf313 : public ::testing::Test {
 protected:
  void SetUp() override {
    auto source = std::filesystem::path(HANGPY_TEST_DATA_DIR) / ".." / "corpus" / "pyenv-3.13" /
                  "deadlock.core.zst";
    if (!std::filesystem::exists(source)) GTEST_SKIP() << "no 3.13 snapshot in the corpus";
    core_ = std::filesystem::temp_directory_path() / ("hangpy-test-313-" + std::to_string(::getpid()) + ".core");
    std::string command = "zstd -q -d -f '" + source.string() + "' -o '" + core_.string() + "'";
    if (std::system(command.c_str()) != 0) GTEST_SKIP() << "zstd failed";
    targets::CoreOptions options;
    options.core_path = core_.string();
    auto target = targets::CoreTarget::open(options);
    ASSERT_TRUE(target) << target.error().describe();
    target_ = std::move(*target);
    auto runtime = target_->find_symbol("_PyRuntime");
    ASSERT_TRUE(runtime);
    runtime_ = *runtime;
  }
  void TearDown() override {
    if (!core_.empty()) std::filesystem::remove(core_);
  }

  std::filesystem::path core_;
  std::unique_ptr<targets::CoreTarget> target_;
  uint64_t runtime_ = 0;
};

TEST_F(DebugOffsetsOf313, ValidateAndAgreeWithTheCompiledTable) {
  auto offsets = read_debug_offsets(target_->memory(), runtime_);
  ASSERT_TRUE(offsets) << offsets.error().describe();
  EXPECT_EQ(offsets->version_hex >> 16, 0x030du);
  EXPECT_FALSE(offsets->free_threaded);
  const Layout* compiled = find_layout(3, 13, false);
  ASSERT_NE(compiled, nullptr);
  std::vector<std::string> differences;
  Layout derived = layout_from_debug_offsets(*offsets, *compiled, differences);
  EXPECT_TRUE(differences.empty()) << differences.front();
  EXPECT_EQ(derived.thread_state.native_thread_id, compiled->thread_state.native_thread_id);
  EXPECT_NE(derived.interpreter.sysdict, kAbsent);  // a field only the process told us
}

TEST_F(DebugOffsetsOf313, FieldOutsideItsStructFailsValidation) {
  auto offsets = read_debug_offsets(target_->memory(), runtime_);
  ASSERT_TRUE(offsets);
  // thread_state.native_thread_id's slot: 8 bytes of cookie, then 8 per field in schema order.
  auto schema = debug_offsets_schemas().front();
  size_t index = 0;
  while (schema.fields[index] != "thread_state.native_thread_id") ++index;
  PatchedMemory broken(target_->memory(), runtime_ + 8 + 8 * index, 1 << 30);
  auto result = read_debug_offsets(broken, runtime_);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::kCorrupt);
  EXPECT_NE(result.error().message.find("native_thread_id"), std::string::npos);
}

TEST_F(DebugOffsetsOf313, MissingCookieIsNotFound) {
  PatchedMemory no_cookie(target_->memory(), runtime_, 0);
  auto result = read_debug_offsets(no_cookie, runtime_);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::kNotFound);
}

// Every snapshot in the corpus whose process states its offsets: the compiled table of that version
// must say the same, field by field (a wrong table would otherwise only show as a note at run
// time, as tuple.ob_item of 3.14 once did).
TEST(DebugOffsetsOfTheCorpus, EveryCompiledTableAgreesWithItsRealProcesses) {
  const auto corpus = std::filesystem::path(HANGPY_TEST_DATA_DIR) / ".." / "corpus";
  if (std::system("zstd --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "zstd is not installed";
  std::set<std::string> compared;
  const auto core = std::filesystem::temp_directory_path() / ("hangpy-test-offsets-" + std::to_string(::getpid()) + ".core");
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    const auto source = entry.path() / "deadlock.core.zst";
    if (!std::filesystem::exists(source)) continue;
    std::string command = "zstd -q -d -f '" + source.string() + "' -o '" + core.string() + "'";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    targets::CoreOptions options;
    options.core_path = core.string();
    auto target = targets::CoreTarget::open(options);
    ASSERT_TRUE(target) << source << ": " << target.error().describe();
    auto runtime = (*target)->find_symbol("_PyRuntime");
    if (!runtime) continue;  // 2.7 and 3.6 have no _PyRuntime
    auto offsets = read_debug_offsets((*target)->memory(), *runtime);
    if (!offsets) continue;  // before 3.13: no _Py_DebugOffsets
    const int major = static_cast<int>(offsets->version_hex >> 24);
    const int minor = static_cast<int>((offsets->version_hex >> 16) & 0xff);
    const Layout* compiled = find_layout(major, minor, offsets->free_threaded);
    // A version newer than every table (the development branch) is read through its offsets
    // alone: there is no table to agree with. An older one must have its table.
    bool newer_than_every_table = true;
    for (const Layout* layout : all_layouts())
      if (layout->major > major || (layout->major == major && layout->minor >= minor)) newer_than_every_table = false;
    if (!compiled && newer_than_every_table) continue;
    ASSERT_NE(compiled, nullptr) << source << ": no table for its version";
    std::vector<std::string> differences;
    layout_from_debug_offsets(*offsets, *compiled, differences);
    EXPECT_TRUE(differences.empty())
        << source << ": the " << compiled->name << " table differs: " << differences.front();
    compared.insert(std::string(compiled->name));
  }
  std::filesystem::remove(core);
  // Every table of a version that publishes its offsets has a real process in the corpus.
  for (const Layout* layout : all_layouts()) {
    if (layout->major == 3 && layout->minor >= 13) {
      EXPECT_TRUE(compared.contains(std::string(layout->name)))
          << "no corpus snapshot checks the " << layout->name << " table";
    }
  }
}

}  // namespace
