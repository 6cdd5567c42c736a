#include "inputs/decompress_core.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "inputs/progress_meter.h"
#include "inputs/sparse_spool.h"
#include "inputs/stream_decoder.h"

namespace hangpy::inputs {
namespace {

constexpr size_t kCompressedBlockBytes = 1 << 20;

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Expected<DecompressedCore> decompress_core(const std::string& path, const std::string& name,
                                           InputFormat format) {
  std::unique_ptr<StreamDecoder> decoder = make_decoder(format);
  if (!decoder) {
    return make_error(ErrorKind::kUnsupported,
                      fmt::format("{}: {} is not a compressed format", name, format_name(format)));
  }
  FileDescriptor input(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (input.get() < 0) {
    return make_error(ErrorKind::kIo, fmt::format("cannot open {}: {}", name, std::strerror(errno)));
  }
  struct stat status{};
  const uint64_t total = fstat(input.get(), &status) == 0 ? static_cast<uint64_t>(status.st_size) : 0;
  auto spool = SparseSpool::create(fmt::format("the data decompressed from {}", name));
  if (!spool) return std::unexpected(spool.error());
  // What a compressed core expands to is a core: anything else stops at its first bytes, and a
  // core stops at its own end, however much more the compressed data would give.
  spool->require_elf();
  ProgressMeter progress(fmt::format("decompressing {} ({})", name, format_name(format)), total);
  const ByteSink sink = [&spool](std::span<const std::byte> data) { return spool->append(data); };

  DecompressedCore result;
  std::vector<std::byte> block(kCompressedBlockBytes);
  for (;;) {
    ssize_t got = read(input.get(), block.data(), block.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return make_error(ErrorKind::kIo, fmt::format("cannot read {}: {}", name, std::strerror(errno)));
    }
    if (got == 0) break;
    if (spool->ignored_bytes() > 0) break;  // the core is whole: the rest is not the core's
    result.compressed_bytes += static_cast<uint64_t>(got);
    if (auto ok = decoder->feed(std::span(block).first(static_cast<size_t>(got)), sink); !ok) {
      Error error = ok.error();
      if (error.kind == ErrorKind::kInvalidInput) {
        error.message = fmt::format("{}: {} (after {} of {} bytes)", name, error.message,
                                    result.compressed_bytes, total);
      }
      return std::unexpected(error);
    }
    progress.update(result.compressed_bytes, spool->size());
  }
  // Stopped at the core's end: what the compressed data holds after it is not read.
  const bool core_whole = spool->ignored_bytes() > 0;
  auto complete = core_whole ? Expected<bool>(true) : decoder->finish(sink);
  if (!complete) {
    Error error = complete.error();
    error.message = fmt::format("{}: {}", name, error.message);
    return std::unexpected(error);
  }
  if (result.compressed_bytes == 0) {
    return make_error(ErrorKind::kInvalidInput, fmt::format("{}: the file is empty", name));
  }
  if (!*complete && spool->size() == 0) {
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("{}: the {} data ends before any of the core (cut short?)", name,
                                  format_name(format)));
  }
  if (!*complete) {
    result.truncation = fmt::format(
        "the {} data in {} ends early (cut short?): analysing the first {} bytes it holds",
        format_name(format), name, spool->size());
  }
  result.core_bytes = spool->size();
  auto spooled = spool->finish();
  if (!spooled) return std::unexpected(spooled.error());
  result.path = *spooled;
  return result;
}

}  // namespace hangpy::inputs
