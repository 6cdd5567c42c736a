#include "coreanalyze/stdin_core.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace hangpy::coreanalyze {
namespace {

constexpr size_t kBlock = 1 << 16;

bool all_zero(const char* data, size_t size) {
  return std::all_of(data, data + size, [](char c) { return c == 0; });
}

// Copies the pipe into an unnamed file in $TMPDIR (or /tmp). Skipping zero blocks keeps a core
// of a big process (mostly untouched heap) small on disk, as the kernel writes it.
Expected<int> spool(int input) {
  const char* directory = std::getenv("TMPDIR");
  if (directory == nullptr || *directory == '\0') directory = "/tmp";
  int output = open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (output < 0) {
    return make_error(ErrorKind::kIo, fmt::format("cannot make a temporary file in {} for the core "
                                                  "on standard input: {}",
                                                  directory, std::strerror(errno)));
  }
  std::vector<char> block(kBlock);
  off_t size = 0;
  for (;;) {
    ssize_t got = read(input, block.data(), block.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      close(output);
      return make_error(ErrorKind::kIo,
                        fmt::format("cannot read standard input: {}", std::strerror(errno)));
    }
    if (got == 0) break;
    const auto count = static_cast<size_t>(got);
    if (!all_zero(block.data(), count)) {
      for (size_t written = 0; written < count;) {
        ssize_t put = pwrite(output, block.data() + written, count - written,
                             size + static_cast<off_t>(written));
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) {
          int error = errno;
          close(output);
          return make_error(ErrorKind::kIo, fmt::format("cannot copy standard input to {}: {}",
                                                        directory, std::strerror(error)));
        }
        written += static_cast<size_t>(put);
      }
    }
    size += static_cast<off_t>(count);
  }
  if (ftruncate(output, size) != 0) {
    int error = errno;
    close(output);
    return make_error(ErrorKind::kIo, fmt::format("cannot copy standard input to {}: {}",
                                                  directory, std::strerror(error)));
  }
  return output;
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
  auto copy = spool(STDIN_FILENO);
  if (!copy) return std::unexpected(copy.error());
  return fmt::format("/proc/self/fd/{}", *copy);
}

}  // namespace hangpy::coreanalyze
