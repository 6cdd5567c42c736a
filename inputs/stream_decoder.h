// Streaming decompressors, one per format (zstd_decoder.cpp, lz4_decoder.cpp, xz_decoder.cpp,
// zlib_decoder.cpp): compressed bytes go in as they are read, decompressed bytes go out to a sink
// as they are produced, so no core is ever held whole in memory.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>

#include "base/error.h"
#include "inputs/input_format.h"

namespace hangpy::inputs {

using ByteSink = std::function<Expected<void>(std::span<const std::byte>)>;

// A decoder's output buffer, left uninitialised: the library writes each byte before the sink
// reads it, and zeroing a megabyte per stream costs more than decoding a small input does
// (fuzz_apport spent half its time there).
class DecoderOutput {
 public:
  explicit DecoderOutput(size_t size) : bytes_(std::make_unique_for_overwrite<std::byte[]>(size)), size_(size) {}
  std::byte* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  std::byte* begin() const { return bytes_.get(); }
  std::byte* end() const { return bytes_.get() + size_; }

 private:
  std::unique_ptr<std::byte[]> bytes_;
  size_t size_;
};

class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  // Decodes all of `input` (a piece of the stream), passing the output to `sink`. Errors:
  // kInvalidInput (corrupt data: the message names the format and the library's reason), or the
  // sink's own error.
  virtual Expected<void> feed(std::span<const std::byte> input, const ByteSink& sink) = 0;
  // Called once the input has ended: passes on what the decoder still holds, and says whether
  // the input ended at the end of a stream (a whole frame, with its checksum). false means the
  // compressed file was cut short; what it held has gone to the sink all the same.
  virtual Expected<bool> finish(const ByteSink& sink) = 0;
};

std::unique_ptr<StreamDecoder> make_zstd_decoder();
std::unique_ptr<StreamDecoder> make_lz4_decoder();
std::unique_ptr<StreamDecoder> make_xz_decoder();
// gzip or zlib, told apart by their headers (apport writes gzip; older apport zlib).
std::unique_ptr<StreamDecoder> make_zlib_decoder();

// The decoder for a compressed format; nullptr for the others.
std::unique_ptr<StreamDecoder> make_decoder(InputFormat format);

}  // namespace hangpy::inputs
