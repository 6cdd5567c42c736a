// libFuzzer target: an apport .crash file from any bytes through what read_apport_core does with
// it, in memory: the field parser (fed in pieces whose size the last byte picks, so that lines,
// base64 quartets and padding are cut anywhere), the base64 decoding of CoreDump and the
// gzip/zlib decoder behind it, into a capped sink.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "inputs/apport_parser.h"
#include "inputs/stream_decoder.h"
#include "fuzz/bounded_sink.h"

using namespace ::hangpy::inputs;

using namespace hangpy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The control byte sits at the end, so that the seeds (whole apport files) start as apport
  // files do.
  const size_t piece = size_t{1} << (data[size - 1] % 24);
  std::string_view text(reinterpret_cast<const char*>(data), size - 1);
  fuzz::BoundedSink output;
  const auto to_output = output.sink();
  auto decoder = inputs::make_zlib_decoder();
  inputs::ApportParser parser("CoreDump", [&decoder, &to_output](std::span<const std::byte> bytes) {
    return decoder->feed(bytes, to_output);
  });
  while (!text.empty()) {
    const size_t take = std::min(piece, text.size());
    if (!parser.feed(text.substr(0, take))) return 0;
    text.remove_prefix(take);
  }
  if (!parser.finish()) return 0;
  for (const auto& [name, value] : parser.fields()) {
    if (value.size() > inputs::kMaxApportTextField) __builtin_trap();  // the parser's own bound
  }
  if (parser.binary_fields().contains("CoreDump")) (void)decoder->finish(to_output);
  return 0;
}
