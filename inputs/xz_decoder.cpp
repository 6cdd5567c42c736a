// xz through liblzma (concatenated streams allowed, as xz -d reads them).
#include <lzma.h>

#include <cstdint>

#include "inputs/stream_decoder.h"

namespace hangpy::inputs {
namespace {

constexpr size_t kXzOutputBytes = 1 << 20;
// xz -9 needs 65 MiB to decompress; a header asking for more than this is hostile or broken, and
// must not make us allocate it.
constexpr uint64_t kMemoryLimit = 1ull << 30;

std::string_view lzma_reason(lzma_ret code) {
  switch (code) {
    case LZMA_MEM_ERROR: return "out of memory";
    case LZMA_MEMLIMIT_ERROR: return "memory limit reached";
    case LZMA_FORMAT_ERROR: return "not in the xz format";
    case LZMA_OPTIONS_ERROR: return "unsupported options";
    case LZMA_DATA_ERROR: return "data is corrupt";
    case LZMA_BUF_ERROR: return "data is truncated or corrupt";
    default: return "unexpected error";
  }
}

class XzDecoder : public StreamDecoder {
 public:
  XzDecoder() : output_(kXzOutputBytes) {
    ok_ = lzma_stream_decoder(&stream_, kMemoryLimit, LZMA_CONCATENATED) == LZMA_OK;
  }
  ~XzDecoder() override { lzma_end(&stream_); }

  Expected<void> feed(std::span<const std::byte> input, const ByteSink& sink) override {
    if (!ok_) return make_error(ErrorKind::kIo, "xz: cannot start liblzma's decoder");
    stream_.next_in = reinterpret_cast<const uint8_t*>(input.data());
    stream_.avail_in = input.size();
    for (;;) {
      stream_.next_out = reinterpret_cast<uint8_t*>(output_.data());
      stream_.avail_out = output_.size();
      // LZMA_CONCATENATED wants LZMA_FINISH to say that no stream follows; until the caller
      // knows the file has ended, everything runs with LZMA_RUN.
      const lzma_ret code = lzma_code(&stream_, LZMA_RUN);
      const size_t produced = output_.size() - stream_.avail_out;
      if (produced > 0) {
        if (auto ok = sink(std::span(output_).first(produced)); !ok) return ok;
      }
      if (code == LZMA_STREAM_END) {
        stream_end_ = true;
        break;
      }
      if (code != LZMA_OK) {
        return make_error(ErrorKind::kInvalidInput,
                          fmt::format("corrupt xz data: {}", lzma_reason(code)));
      }
      if (stream_.avail_in == 0 && produced < output_.size()) break;
    }
    return {};
  }

  Expected<bool> finish(const ByteSink& sink) override {
    if (!ok_ || stream_end_) return stream_end_;
    stream_.next_in = nullptr;
    stream_.avail_in = 0;
    for (;;) {
      stream_.next_out = reinterpret_cast<uint8_t*>(output_.data());
      stream_.avail_out = output_.size();
      const lzma_ret code = lzma_code(&stream_, LZMA_FINISH);
      const size_t produced = output_.size() - stream_.avail_out;
      if (produced > 0) {
        if (auto ok = sink(std::span(output_).first(produced)); !ok) return std::unexpected(ok.error());
      }
      if (code == LZMA_STREAM_END) return true;
      if (code == LZMA_BUF_ERROR) return false;  // the input stops inside a stream
      if (code != LZMA_OK) {
        return make_error(ErrorKind::kInvalidInput,
                          fmt::format("corrupt xz data: {}", lzma_reason(code)));
      }
    }
  }

 private:
  lzma_stream stream_ = LZMA_STREAM_INIT;
  DecoderOutput output_;
  bool ok_ = false;
  bool stream_end_ = false;
};

}  // namespace

std::unique_ptr<StreamDecoder> make_xz_decoder() { return std::make_unique<XzDecoder>(); }

}  // namespace hangpy::inputs
