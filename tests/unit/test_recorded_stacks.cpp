// The native stacks a snapshot core records (native/recorded_stacks.h): what is encoded decodes
// the same, and a note a damaged or hostile core gives is refused, never read past its end.
#include <gtest/gtest.h>

#include "native/recorded_stacks.h"

using namespace hangpy;
using native::FrameHow;
using native::NativeFrame;
using native::NativeStack;

namespace {

// Thread "MainThread" of a DDP rank of tests/programs/job_ddp_uneven.py (torch 1.13, Debian's
// python3.11), its innermost frames as libdwfl unwound them.
std::vector<NativeStack> ddp_rank_stacks() {
  NativeStack main_thread;
  main_thread.lwp = 2946;
  main_thread.frames = {
      {0x7f2b5e491d36, 0x7ffd1ba4e6b0, FrameHow::kInitial, "/usr/lib/x86_64-linux-gnu/libc.so.6",
       "__futex_abstimed_wait_common", 0x116, 0x8ad36, false},
      {0x7f2b5e4947b7, 0x7ffd1ba4e710, FrameHow::kCfi, "/usr/lib/x86_64-linux-gnu/libc.so.6",
       "pthread_cond_wait@@GLIBC_2.3.2", 0x267, 0x8d7b7, false},
      {0x7f2b41a4c1a8, 0x7ffd1ba4e7a0, FrameHow::kCfi, "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13",
       "_ZN4c10d7Reducer17finalize_backwardEv", 0x98, 0x3a4c1a8, false},
      {0x7f2b41a4c1a8, 0x7ffd1ba4e7a0, FrameHow::kCfi, "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13",
       "", 0, 0x3a4c1a8, true},
      {0x55d0c0a1b2c3, 0x7ffd1ba4e800, FrameHow::kFramePointer, "", "", 0, 0, false},
  };
  NativeStack cut;
  cut.lwp = 2951;
  cut.end_reason = "the unwinder found no call-frame information";
  return {main_thread, cut};
}

void expect_same(const std::vector<NativeStack>& a, const std::vector<NativeStack>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].lwp, b[i].lwp);
    EXPECT_EQ(a[i].end_reason, b[i].end_reason);
    ASSERT_EQ(a[i].frames.size(), b[i].frames.size());
    for (size_t j = 0; j < a[i].frames.size(); ++j) {
      const NativeFrame& x = a[i].frames[j];
      const NativeFrame& y = b[i].frames[j];
      EXPECT_EQ(x.pc, y.pc);
      EXPECT_EQ(x.sp, y.sp);
      EXPECT_EQ(x.how, y.how);
      EXPECT_EQ(x.module, y.module);
      EXPECT_EQ(x.symbol, y.symbol);
      EXPECT_EQ(x.offset, y.offset);
      EXPECT_EQ(x.module_offset, y.module_offset);
      EXPECT_EQ(x.inlined, y.inlined);
    }
  }
}

}  // namespace

TEST(RecordedStacks, WhatIsEncodedDecodesTheSame) {
  const std::vector<NativeStack> stacks = ddp_rank_stacks();
  const std::vector<std::byte> note = native::encode_native_stacks(stacks);
  const auto decoded = native::decode_native_stacks(note);
  ASSERT_TRUE(decoded.has_value());
  expect_same(stacks, *decoded);
  EXPECT_TRUE(native::decode_native_stacks({})->empty());
}

TEST(RecordedStacks, EveryCutOfANoteIsRefused) {
  const std::vector<std::byte> note = native::encode_native_stacks(ddp_rank_stacks());
  // Each prefix ends inside a stack (a cut at a stack's end is a shorter, valid note).
  const std::vector<std::byte> first_only = native::encode_native_stacks({ddp_rank_stacks()[0]});
  for (size_t size = 1; size < note.size(); ++size) {
    if (size == first_only.size()) continue;
    EXPECT_FALSE(native::decode_native_stacks(std::span(note).first(size)).has_value()) << size;
  }
}

TEST(RecordedStacks, HostileCountsAndKindsAreRefused) {
  std::vector<std::byte> note = native::encode_native_stacks({ddp_rank_stacks()[1]});
  // The frame count (the last 4 bytes of a stack with no frames) claims 2^32-1 frames: refused
  // before anything is reserved for them.
  std::fill(note.end() - 4, note.end(), std::byte{0xff});
  EXPECT_FALSE(native::decode_native_stacks(note).has_value());

  NativeStack one;
  one.lwp = 1;
  one.frames.push_back(NativeFrame{});
  note = native::encode_native_stacks({one});
  const size_t how_at = 8 + 1 + 4 + 4 * 8;  // lwp, flags, count, four numbers
  note[how_at] = std::byte{7};             // no such FrameHow
  EXPECT_FALSE(native::decode_native_stacks(note).has_value());
}

// The note's bytes are a format the committed snapshots (tests/corpus) are written in: a change
// of layout must be seen here, not found later as snapshots that read differently. The golden
// bytes are written out field by field from the format (native/recorded_stacks.cpp): per stack
// the LWP (u64 LE), flags (u8, 1 = an end reason follows), the reason (NUL-terminated), the
// frame count (u32 LE); per frame pc, sp, offset, module offset (u64 LE each), how (u8), flags
// (u8, 1 = inlined), module and symbol (NUL-terminated).
TEST(RecordedStacks, GoldenBytes) {
  NativeStack stack;
  stack.lwp = 0x0102;
  stack.end_reason = "x";
  stack.frames.push_back(NativeFrame{0x1122334455667788, 0x10, FrameHow::kCfi, "m", "f", 0x20,
                                     0x30, true});
  const std::vector<uint8_t> golden = {
      0x02, 0x01, 0, 0, 0, 0, 0, 0,                    // lwp
      0x01,                                            // flags: an end reason
      'x', 0,                                          // the reason
      0x01, 0, 0, 0,                                   // one frame
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // pc
      0x10, 0, 0, 0, 0, 0, 0, 0,                       // sp
      0x20, 0, 0, 0, 0, 0, 0, 0,                       // offset in the symbol
      0x30, 0, 0, 0, 0, 0, 0, 0,                       // offset in the module
      0x01,                                            // how: cfi
      0x01,                                            // flags: inlined
      'm', 0, 'f', 0};                                 // module, symbol
  const std::vector<std::byte> note = native::encode_native_stacks({stack});
  ASSERT_EQ(note.size(), golden.size());
  for (size_t i = 0; i < golden.size(); ++i)
    EXPECT_EQ(static_cast<uint8_t>(note[i]), golden[i]) << "byte " << i;
  std::vector<std::byte> from_golden;
  for (uint8_t byte : golden) from_golden.push_back(std::byte{byte});
  const auto decoded = native::decode_native_stacks(from_golden);
  ASSERT_TRUE(decoded.has_value());
  expect_same({stack}, *decoded);
}
