// The LZ4 frame format through liblz4's LZ4F API (what `lz4` and systemd-coredump write; not the
// legacy or raw block formats).
#include <lz4frame.h>

#include "inputs/stream_decoder.h"

namespace hangpy::inputs {
namespace {

constexpr size_t kOutputBytes = 1 << 20;

class Lz4Decoder : public StreamDecoder {
 public:
  Lz4Decoder() : output_(kOutputBytes) {
    if (LZ4F_isError(LZ4F_createDecompressionContext(&context_, LZ4F_VERSION))) context_ = nullptr;
  }
  ~Lz4Decoder() override { LZ4F_freeDecompressionContext(context_); }

  Expected<void> feed(std::span<const std::byte> input, const ByteSink& sink) override {
    if (context_ == nullptr) return make_error(ErrorKind::kIo, "lz4: out of memory");
    const std::byte* next = input.data();
    size_t left = input.size();
    // LZ4F may keep output back while input remains, so the loop runs until both are done.
    for (;;) {
      size_t consumed = left;
      size_t produced = output_.size();
      const size_t hint = LZ4F_decompress(context_, output_.data(), &produced, next, &consumed, nullptr);
      if (LZ4F_isError(hint)) {
        return make_error(ErrorKind::kInvalidInput,
                          fmt::format("corrupt lz4 data: {}", LZ4F_getErrorName(hint)));
      }
      // A call that moved nothing says what the next frame wants, not how this one ended.
      if (consumed > 0 || produced > 0) frame_done_ = hint == 0;
      next += consumed;
      left -= consumed;
      if (produced > 0) {
        if (auto ok = sink(std::span(output_).first(produced)); !ok) return ok;
      }
      if (left == 0 && produced == 0) break;
    }
    return {};
  }

  Expected<bool> finish(const ByteSink&) override { return frame_done_; }

 private:
  LZ4F_dctx* context_ = nullptr;
  DecoderOutput output_;
  bool frame_done_ = false;
};

}  // namespace

std::unique_ptr<StreamDecoder> make_lz4_decoder() { return std::make_unique<Lz4Decoder>(); }

}  // namespace hangpy::inputs
