#include "inputs/stream_decoder.h"

namespace hangpy::inputs {

std::unique_ptr<StreamDecoder> make_decoder(InputFormat format) {
  switch (format) {
    case InputFormat::kZstd: return make_zstd_decoder();
    case InputFormat::kLz4: return make_lz4_decoder();
    case InputFormat::kXz: return make_xz_decoder();
    case InputFormat::kGzip: return make_zlib_decoder();
    default: return nullptr;
  }
}

}  // namespace hangpy::inputs
