#include "native/recorded_stacks.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace hangpy::native {
namespace {

constexpr uint8_t kHasEndReason = 1;
constexpr uint8_t kInlined = 1;
// The fixed part of a frame: four 8-byte fields and two flag bytes, then two strings of at
// least their NUL each. Bounds how many frames a count may claim before any is read.
constexpr size_t kMinFrameBytes = 4 * 8 + 2 + 2;

class Writer {
 public:
  void u8(uint8_t value) { raw(&value, 1); }
  void u32(uint32_t value) { raw(&value, sizeof(value)); }
  void u64(uint64_t value) { raw(&value, sizeof(value)); }
  void text(const std::string& value) { raw(value.c_str(), value.size() + 1); }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  void raw(const void* data, size_t size) {
    const auto* bytes = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), bytes, bytes + size);
  }
  std::vector<std::byte> out_;
};

// Reads the note's bytes in order; every read is checked against what is left.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  bool done() const { return at_ == bytes_.size(); }
  size_t left() const { return bytes_.size() - at_; }
  template <typename T>
  bool number(T& value) {
    if (left() < sizeof(T)) return false;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  bool text(std::string& value) {
    const char* start = reinterpret_cast<const char*>(bytes_.data() + at_);
    const size_t length = strnlen(start, left());
    if (length == left()) return false;  // no NUL before the end
    value.assign(start, length);
    at_ += length + 1;
    return true;
  }

 private:
  std::span<const std::byte> bytes_;
  size_t at_ = 0;
};

}  // namespace

std::vector<std::byte> encode_native_stacks(const std::vector<NativeStack>& stacks) {
  Writer out;
  for (const NativeStack& stack : stacks) {
    out.u64(static_cast<uint64_t>(stack.lwp));
    out.u8(stack.end_reason ? kHasEndReason : 0);
    if (stack.end_reason) out.text(*stack.end_reason);
    out.u32(static_cast<uint32_t>(stack.frames.size()));
    for (const NativeFrame& frame : stack.frames) {
      out.u64(frame.pc);
      out.u64(frame.sp);
      out.u64(frame.offset);
      out.u64(frame.module_offset);
      out.u8(static_cast<uint8_t>(frame.how));
      out.u8(frame.inlined ? kInlined : 0);
      out.text(frame.module);
      out.text(frame.symbol);
    }
  }
  return out.take();
}

std::optional<std::vector<NativeStack>> decode_native_stacks(std::span<const std::byte> desc) {
  Reader in(desc);
  std::vector<NativeStack> stacks;
  while (!in.done()) {
    NativeStack stack;
    uint64_t lwp = 0;
    uint8_t flags = 0;
    uint32_t count = 0;
    if (!in.number(lwp) || !in.number(flags)) return std::nullopt;
    stack.lwp = static_cast<int64_t>(lwp);
    if (flags & kHasEndReason) {
      std::string reason;
      if (!in.text(reason)) return std::nullopt;
      stack.end_reason = std::move(reason);
    }
    if (!in.number(count) || count > in.left() / kMinFrameBytes) return std::nullopt;
    stack.frames.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      NativeFrame frame;
      uint8_t how = 0;
      uint8_t frame_flags = 0;
      if (!in.number(frame.pc) || !in.number(frame.sp) || !in.number(frame.offset) ||
          !in.number(frame.module_offset) || !in.number(how) || !in.number(frame_flags))
        return std::nullopt;
      if (how > static_cast<uint8_t>(FrameHow::kTrampoline)) return std::nullopt;
      frame.how = static_cast<FrameHow>(how);
      frame.inlined = (frame_flags & kInlined) != 0;
      if (!in.text(frame.module) || !in.text(frame.symbol)) return std::nullopt;
      stack.frames.push_back(std::move(frame));
    }
    stacks.push_back(std::move(stack));
  }
  return stacks;
}

}  // namespace hangpy::native
