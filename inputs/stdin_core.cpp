#include "inputs/stdin_core.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "inputs/sparse_spool.h"

namespace hangpy::coreanalyze {
namespace {

constexpr size_t kBlock = 1 << 16;

// Copies the pipe into a sparse temporary file: a core of a big process is mostly untouched heap.
Expected<std::string> spool(int input) {
  auto spool = SparseSpool::create("the core on standard input");
  if (!spool) return std::unexpected(spool.error());
  std::vector<std::byte> block(kBlock);
  for (;;) {
    ssize_t got = read(input, block.data(), block.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return make_error(ErrorKind::kIo,
                        fmt::format("cannot read standard input: {}", std::strerror(errno)));
    }
    if (got == 0) break;
    if (auto ok = spool->append(std::span(block).first(static_cast<size_t>(got))); !ok)
      return std::unexpected(ok.error());
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

}  // namespace hangpy::coreanalyze
