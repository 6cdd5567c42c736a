// zstd through libzstd's streaming API; concatenated frames are one stream, as zstd -d reads them.
#include <zstd.h>

#include "inputs/stream_decoder.h"

namespace hangpy::inputs {
namespace {

class ZstdDecoder : public StreamDecoder {
 public:
  ZstdDecoder() : stream_(ZSTD_createDStream()), output_(ZSTD_DStreamOutSize()) {
    // libzstd refuses frames whose window is over 128 MiB (window log 27) unless told otherwise:
    // `zstd --long=31` makes such frames, and a core compressed from a pipe always gets the window
    // its level asks for. The window is allocated only as big as the frame says (up to 2 GiB for
    // --long=31), so a usual systemd-coredump core keeps its few MiB.
    if (stream_ != nullptr) ZSTD_DCtx_setParameter(stream_, ZSTD_d_windowLogMax, kMaxWindowLog);
  }
  ~ZstdDecoder() override { ZSTD_freeDStream(stream_); }

  Expected<void> feed(std::span<const std::byte> input, const ByteSink& sink) override {
    if (stream_ == nullptr) return make_error(ErrorKind::kIo, "zstd: out of memory");
    ZSTD_inBuffer in{input.data(), input.size(), 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer out{output_.data(), output_.size(), 0};
      const size_t hint = ZSTD_decompressStream(stream_, &out, &in);
      if (ZSTD_isError(hint)) {
        return make_error(ErrorKind::kInvalidInput,
                          fmt::format("corrupt zstd data: {}", ZSTD_getErrorName(hint)));
      }
      frame_done_ = hint == 0;
      if (out.pos > 0) {
        if (auto ok = sink(std::span(output_).first(out.pos)); !ok) return ok;
      }
    }
    // Output the decoder still holds although all input has been consumed.
    for (;;) {
      ZSTD_outBuffer out{output_.data(), output_.size(), 0};
      const size_t hint = ZSTD_decompressStream(stream_, &out, &in);
      if (ZSTD_isError(hint)) {
        return make_error(ErrorKind::kInvalidInput,
                          fmt::format("corrupt zstd data: {}", ZSTD_getErrorName(hint)));
      }
      // A call that moved nothing says what the next frame wants, not how this one ended.
      if (out.pos == 0) break;
      frame_done_ = hint == 0;
      if (auto ok = sink(std::span(output_).first(out.pos)); !ok) return ok;
    }
    return {};
  }

  Expected<bool> finish(const ByteSink&) override { return frame_done_; }

 private:
  static constexpr int kMaxWindowLog = 31;  // ZSTD_WINDOWLOG_MAX on 64-bit hosts
  ZSTD_DStream* stream_;
  DecoderOutput output_;
  bool frame_done_ = false;
};

}  // namespace

std::unique_ptr<StreamDecoder> make_zstd_decoder() { return std::make_unique<ZstdDecoder>(); }

}  // namespace hangpy::inputs
