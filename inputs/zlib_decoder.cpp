// gzip and zlib through zlib's inflate, which tells them apart by their headers (windowBits
// 15 + 32). Several gzip members in a row are one stream, as gzip -d reads them.
#include <zlib.h>

#include "inputs/stream_decoder.h"

namespace hangpy::inputs {
namespace {

constexpr size_t kZlibOutputBytes = 1 << 20;
constexpr int kGzipOrZlib = 15 + 32;

class ZlibDecoder : public StreamDecoder {
 public:
  ZlibDecoder() : output_(kZlibOutputBytes) { ok_ = inflateInit2(&stream_, kGzipOrZlib) == Z_OK; }
  ~ZlibDecoder() override {
    if (ok_) inflateEnd(&stream_);
  }

  Expected<void> feed(std::span<const std::byte> input, const ByteSink& sink) override {
    if (!ok_) return make_error(ErrorKind::kIo, "zlib: cannot start inflate");
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(input.data()));
    size_t left = input.size();
    while (left > 0 || stream_.avail_in > 0) {
      // avail_in is 32 bits: a big piece goes in as several.
      if (stream_.avail_in == 0) {
        stream_.avail_in = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
        left -= stream_.avail_in;
      }
      if (stream_end_) {  // another gzip member follows
        inflateReset(&stream_);
        stream_end_ = false;
      }
      stream_.next_out = reinterpret_cast<Bytef*>(output_.data());
      stream_.avail_out = static_cast<uInt>(output_.size());
      const int code = inflate(&stream_, Z_NO_FLUSH);
      const size_t produced = output_.size() - stream_.avail_out;
      if (produced > 0) {
        if (auto ok = sink(std::span(output_).first(produced)); !ok) return ok;
      }
      if (code == Z_STREAM_END) {
        stream_end_ = true;
        continue;
      }
      if (code == Z_BUF_ERROR && stream_.avail_in == 0) continue;  // wants more input
      if (code != Z_OK) {
        return make_error(ErrorKind::kInvalidInput,
                          fmt::format("corrupt gzip/zlib data: {}",
                                      stream_.msg != nullptr ? stream_.msg : "inflate failed"));
      }
    }
    // Output inflate still holds although all input is in.
    while (!stream_end_) {
      stream_.next_out = reinterpret_cast<Bytef*>(output_.data());
      stream_.avail_out = static_cast<uInt>(output_.size());
      const int code = inflate(&stream_, Z_NO_FLUSH);
      const size_t produced = output_.size() - stream_.avail_out;
      if (produced > 0) {
        if (auto ok = sink(std::span(output_).first(produced)); !ok) return ok;
      }
      if (code == Z_STREAM_END) stream_end_ = true;
      if (produced == 0 || (code != Z_OK && code != Z_STREAM_END)) break;
    }
    return {};
  }

  Expected<bool> finish(const ByteSink&) override { return stream_end_; }

 private:
  z_stream stream_{};
  DecoderOutput output_;
  bool ok_ = false;
  bool stream_end_ = false;
};

}  // namespace

std::unique_ptr<StreamDecoder> make_zlib_decoder() { return std::make_unique<ZlibDecoder>(); }

}  // namespace hangpy::inputs
