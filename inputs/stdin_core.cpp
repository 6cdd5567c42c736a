#include "inputs/stdin_core.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "inputs/input_format.h"
#include "inputs/sparse_spool.h"

namespace hangpy::inputs {
namespace {

constexpr size_t kBlock = 1 << 16;

// Reads what is there, up to `data.size()` bytes, retrying on EINTR: 0 at the end of the input.
Expected<size_t> read_some(int input, std::span<std::byte> data) {
  for (;;) {
    const ssize_t got = read(input, data.data(), data.size());
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) {
      return make_error(ErrorKind::kIo, fmt::format("cannot read standard input: {}", std::strerror(errno)));
    }
  }
}

// Copies the pipe into a sparse temporary file: a core of a big process is mostly untouched heap.
Expected<std::string> spool(int input) {
  auto spool = SparseSpool::create("the core on standard input");
  if (!spool) return std::unexpected(spool.error());
  std::vector<std::byte> block(kBlock);
  // What comes in is told by its first bytes, before anything is spooled: a core or a compressed
  // core; `yes |` or /dev/zero is neither, and never ends.
  size_t filled = 0;
  while (filled < kFormatProbeBytes) {
    auto got = read_some(input, std::span(block).subspan(filled));
    if (!got) return std::unexpected(got.error());
    if (*got == 0) break;
    filled += *got;
  }
  if (filled > 0 && format_of_file_start(std::span(block).first(filled)) == InputFormat::kUnknown) {
    return make_error(ErrorKind::kInvalidInput,
                      "standard input is not a core: its first bytes are neither an ELF core nor zstd, "
                      "lz4, xz, gzip or an apport report");
  }
  for (size_t got = filled; got > 0;) {
    if (auto ok = spool->append(std::span(block).first(got)); !ok) return std::unexpected(ok.error());
    if (spool->ignored_bytes() > 0) break;  // the core is whole: what follows is not the core's
    auto more = read_some(input, block);
    if (!more) return std::unexpected(more.error());
    got = *more;
  }
  return spool->finish();
}

}  // namespace

Expected<std::string> core_path_from_stdin() {
  if (isatty(STDIN_FILENO)) {
    return make_error(ErrorKind::kInvalidInput,
                      "'-' reads the core from standard input, which is a terminal: redirect a "
                      "core file or pipe one in");
  }
  struct stat status{};
  if (fstat(STDIN_FILENO, &status) != 0) {
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("cannot use standard input: {}", std::strerror(errno)));
  }
  if (S_ISREG(status.st_mode)) return std::string("/proc/self/fd/0");
  return spool(STDIN_FILENO);
}

}  // namespace hangpy::inputs
