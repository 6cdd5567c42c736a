// A decoder's output for a fuzzer: counted and dropped, and refused past a cap, so that a small
// input that expands hugely (a decompression bomb) ends the run's work instead of its memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "inputs/stream_decoder.h"

namespace hangpy::fuzz {

inline constexpr uint64_t kMaxDecodedBytes = 64ull << 20;

class BoundedSink {
 public:
  inputs::ByteSink sink() {
    return [this](std::span<const std::byte> data) -> Expected<void> {
      decoded_ += data.size();
      if (decoded_ > kMaxDecodedBytes) return make_error(ErrorKind::kInvalidInput, "over the fuzzer's cap");
      // Touch the first and last byte: ASan flags a span that reaches past its buffer.
      if (!data.empty()) checksum_ += static_cast<uint8_t>(data.front()) + static_cast<uint8_t>(data.back());
      return {};
    };
  }
  uint64_t decoded() const { return decoded_; }

 private:
  uint64_t decoded_ = 0;
  uint64_t checksum_ = 0;
};

}  // namespace hangpy::fuzz
