// The walker on corrupt memory: cycles, dangling pointers and wrong types end a chain with an
// error that names the address; they never loop, crash or throw.
#include <gtest/gtest.h>

#include "cpython/layouts/all_layouts.h"
#include "cpython/runtime_locator.h"
#include "cpython/stack_walker.h"
#include "memory_image.h"

using namespace hangpy;
using namespace hangpy::cpython;

namespace {

constexpr uint64_t kInterp = 0x10000;
constexpr uint64_t kThread = 0x20000;
constexpr uint64_t kCFrame = 0x30000;
constexpr uint64_t kFrames = 0x40000;  // frames are 0x100 apart from here
constexpr uint64_t kCode = 0x50000;
constexpr uint64_t kType = 0x60000;

// A thread whose frames are laid out by the 3.11 table; `code` is what every frame runs.
class CorruptChains : public ::testing::Test {
 protected:
  void SetUp() override {
    layout_ = find_layout(3, 11, false);
    ASSERT_NE(layout_, nullptr);
    for (uint64_t region : {kInterp, kThread, kCFrame, kFrames, kCode, kType})
      image_.map(region, 0x1000);
    image_.put<uint64_t>(kInterp + layout_->interpreter.threads_head, kThread);
    image_.put<uint64_t>(kThread + layout_->thread_state.frame_path[0], kCFrame);
    image_.put<uint64_t>(kCFrame + layout_->thread_state.frame_path[1], kFrames);
    image_.put<uint64_t>(kType + layout_->object.tp_name, kType + 0x800);
    image_.put_string(kType + 0x800, "code");
    image_.put<uint64_t>(kCode + layout_->object.ob_type, kType);
    put_ascii_string(kCode + 0x200, "f.py");
    image_.put<uint64_t>(kCode + layout_->code.filename, kCode + 0x200);
    image_.put<uint64_t>(kCode + layout_->code.name, kCode + 0x200);
  }
  // A compact ASCII str: kind 1, compact and ascii bits set in `state`.
  void put_ascii_string(uint64_t address, const std::string& text) {
    const StringLayout& s = layout_->string;
    image_.put<int64_t>(address + s.length, static_cast<int64_t>(text.size()));
    image_.put<uint32_t>(address + s.state,
                         (1u << s.kind_shift) | (1u << s.compact_shift) | (1u << s.ascii_shift));
    image_.put_string(address + s.ascii_data, text);
  }
  uint64_t frame(int index) const { return kFrames + 0x100 * static_cast<uint64_t>(index); }
  void link(int from, uint64_t to) {
    image_.put<uint64_t>(frame(from) + layout_->frame.previous, to);
    image_.put<uint64_t>(frame(from) + layout_->frame.code, kCode);
  }

  const Layout* layout_ = nullptr;
  test_support::MemoryImage image_;
};

TEST_F(CorruptChains, FrameCycleEndsTheChainWithAnError) {
  link(0, frame(1));
  link(1, frame(2));
  link(2, frame(0));  // back to the start
  StackWalker walker(image_, *layout_);
  PythonThread thread = walker.walk_thread(kThread, 0);
  ASSERT_TRUE(thread.error.has_value());
  EXPECT_EQ(thread.error->kind, ErrorKind::kCorrupt);
  EXPECT_EQ(thread.error->address, frame(0));
}

TEST_F(CorruptChains, DanglingPreviousPointerKeepsTheFramesBeforeIt) {
  link(0, frame(1));
  link(1, 0xdead0000);
  StackWalker walker(image_, *layout_);
  PythonThread thread = walker.walk_thread(kThread, 0);
  ASSERT_TRUE(thread.error.has_value());
  EXPECT_EQ(thread.error->kind, ErrorKind::kUnmapped);
  EXPECT_EQ(thread.error->address, 0xdead0000 + layout_->frame.previous);
}

TEST_F(CorruptChains, ObjectOfTheWrongTypeIsNotTakenForCode) {
  image_.put_string(kType + 0x800, "dict");
  link(0, 0);
  StackWalker walker(image_, *layout_);
  PythonThread thread = walker.walk_thread(kThread, 0);
  ASSERT_TRUE(thread.error.has_value());
  EXPECT_NE(thread.error->message.find("'dict'"), std::string::npos);
  EXPECT_TRUE(thread.frames.empty());
}

TEST_F(CorruptChains, ThreadListCycleKeepsTheStatesReadAndSaysWhy) {
  image_.put<uint64_t>(kThread + layout_->thread_state.next, kThread);
  StackWalker walker(image_, *layout_);
  auto states = walker.thread_states(kInterp);
  ASSERT_TRUE(states.has_value());
  EXPECT_EQ(states->states, std::vector<uint64_t>{kThread});
  ASSERT_TRUE(states->cut.has_value());
  EXPECT_EQ(states->cut->kind, ErrorKind::kCorrupt);
  EXPECT_NE(states->cut->message.find("loops"), std::string::npos);
  // The walk keeps the thread and warns: the result is partial, not empty.
  link(0, 0);
  std::vector<std::string> warnings;
  EXPECT_EQ(walker.walk_interpreters(kInterp, warnings).size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("thread state list loops"), std::string::npos);
}

TEST_F(CorruptChains, InterpreterCycleGivesAWarningNotALoop) {
  image_.put<uint64_t>(kInterp + layout_->interpreter.next, kInterp);
  link(0, 0);
  StackWalker walker(image_, *layout_);
  std::vector<std::string> warnings;
  auto threads = walker.walk_interpreters(kInterp, warnings);
  EXPECT_EQ(threads.size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("loops"), std::string::npos);
}

}  // namespace

namespace {

// A target whose core claims a writable range of almost 2^64 bytes, with nothing saved in it but
// one page, and no symbols: what a corrupt program header looks like to the runtime search.
class AbsurdRangeTarget : public cpython::Target {
 public:
  AbsurdRangeTarget() { image_.map(0x1000, 0x1000); }
  const cpython::AddressSpace& memory() const override { return image_; }
  std::optional<uint64_t> find_symbol(std::string_view) const override { return std::nullopt; }
  std::vector<cpython::NativeThread> threads() const override { return {}; }
  std::vector<cpython::MappedModule> modules() const override { return {}; }
  std::vector<cpython::MemoryRange> writable_ranges() const override {
    return {{0x1000, ~uint64_t{0} - 0x10}};
  }

 private:
  test_support::MemoryImage image_;
};

}  // namespace

// Found by fuzz_core: the search read the claimed range chunk by chunk, for ever.
TEST(RuntimeSearch, AnAbsurdWritableRangeEndsTheSearchWithinItsBudget) {
  AbsurdRangeTarget target;
  for (const Layout* layout : all_layouts()) {
    EXPECT_FALSE(locate_runtime(target, *layout)) << layout->name;
  }
  EXPECT_FALSE(find_debug_offsets_cookie(target));
}
