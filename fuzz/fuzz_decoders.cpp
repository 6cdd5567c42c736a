// libFuzzer target: every stream decoder (zstd, lz4, xz, gzip/zlib) over any bytes. The first
// byte picks the decoder and the size of the pieces the rest is fed in (the decoders must carry
// state across any cut); the output goes to a capped sink, never to memory.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "inputs/stream_decoder.h"
#include "fuzz/bounded_sink.h"

using namespace ::hangpy::inputs;

using namespace hangpy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  constexpr inputs::InputFormat kFormats[] = {inputs::InputFormat::kZstd, inputs::InputFormat::kLz4,
                                                   inputs::InputFormat::kXz, inputs::InputFormat::kGzip};
  auto decoder = inputs::make_decoder(kFormats[control & 3]);
  if (!decoder) __builtin_trap();  // every compressed format has a decoder
  // Pieces of 1, 2, 4 ... 2^31 bytes (the whole input for the larger ones).
  const size_t piece = size_t{1} << (control >> 3);
  fuzz::BoundedSink output;
  const auto sink = output.sink();
  while (!input.empty()) {
    const size_t take = std::min(piece, input.size());
    if (!decoder->feed(input.first(take), sink)) return 0;
    input = input.subspan(take);
  }
  (void)decoder->finish(sink);
  return 0;
}
