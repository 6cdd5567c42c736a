#include "inputs/input_format.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace hangpy::inputs {
namespace {

bool starts_with(std::span<const std::byte> head, std::initializer_list<unsigned> magic) {
  if (head.size() < magic.size()) return false;
  size_t i = 0;
  for (unsigned byte : magic) {
    if (head[i++] != std::byte(byte)) return false;
  }
  return true;
}

std::string_view as_text(std::span<const std::byte> head) {
  return {reinterpret_cast<const char*>(head.data()), head.size()};
}

// apport writes "ProblemType: Crash" first; a report edited by hand may start with another
// field, so any "Name: " first line whose name is apport-like (letters, digits, '.', '_', '-')
// and whose file has no NUL in its first bytes counts.
bool looks_like_apport(std::span<const std::byte> head) {
  const std::string_view text = as_text(head);
  if (text.starts_with("ProblemType:")) return true;
  if (text.find('\0') != std::string_view::npos) return false;
  const size_t colon = text.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon > 40) return false;
  const bool name_ok = std::all_of(text.begin(), text.begin() + static_cast<ptrdiff_t>(colon), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
  return name_ok && colon + 1 < text.size() && (text[colon + 1] == ' ' || text[colon + 1] == '\n');
}

// zlib's two header bytes: deflate (CM 8), a window of at most 32 KiB, and FCHECK making the
// 16-bit value a multiple of 31.
bool looks_like_zlib(std::span<const std::byte> head) {
  if (head.size() < 2) return false;
  const unsigned cmf = std::to_integer<unsigned>(head[0]);
  const unsigned flg = std::to_integer<unsigned>(head[1]);
  return (cmf & 0x0f) == 8 && (cmf >> 4) <= 7 && ((cmf << 8) | flg) % 31 == 0;
}

}  // namespace

InputFormat format_of_file_start(std::span<const std::byte> head) {
  if (starts_with(head, {0x7f, 'E', 'L', 'F'})) return InputFormat::kElf;
  if (starts_with(head, {0x28, 0xb5, 0x2f, 0xfd})) return InputFormat::kZstd;
  if (starts_with(head, {0x04, 0x22, 0x4d, 0x18})) return InputFormat::kLz4;
  if (starts_with(head, {0xfd, '7', 'z', 'X', 'Z', 0x00})) return InputFormat::kXz;
  if (starts_with(head, {0x1f, 0x8b})) return InputFormat::kGzip;
  if (looks_like_zlib(head)) return InputFormat::kGzip;
  if (looks_like_apport(head)) return InputFormat::kApportReport;
  return InputFormat::kUnknown;
}

Expected<InputFormat> format_of_path(const std::string& path) {
  struct stat status{};
  if (stat(path.c_str(), &status) != 0) {
    return make_error(ErrorKind::kIo, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  if (S_ISDIR(status.st_mode)) {
    const bool abrt = is_abrt_layout([&path](const char* name) {
      return access((path + "/" + name).c_str(), F_OK) == 0;
    });
    return abrt ? InputFormat::kAbrtDirectory : InputFormat::kUnknown;
  }
  // A FIFO would block the open until a writer comes and then be read once; a device (/dev/zero,
  // /dev/tty) never ends or waits for a user: a core is a file.
  if (!S_ISREG(status.st_mode)) {
    const char* kind = S_ISFIFO(status.st_mode) ? "a FIFO" : S_ISCHR(status.st_mode) ? "a character device"
                       : S_ISBLK(status.st_mode) ? "a block device" : S_ISSOCK(status.st_mode) ? "a socket"
                                                                                                 : "no regular file";
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("{} is {}, not a core file (to read a core from a pipe, give '-' and "
                                  "pipe it to standard input)", path, kind));
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    return make_error(ErrorKind::kIo, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  std::array<std::byte, kFormatProbeBytes> head{};
  ssize_t got;
  do {
    got = pread(fd, head.data(), head.size(), 0);
  } while (got < 0 && errno == EINTR);
  const int error = errno;
  close(fd);
  if (got < 0) {
    return make_error(ErrorKind::kIo, fmt::format("cannot read {}: {}", path, std::strerror(error)));
  }
  return format_of_file_start(std::span(head).first(static_cast<size_t>(got)));
}

std::string_view format_name(InputFormat format) {
  switch (format) {
    case InputFormat::kElf: return "ELF core";
    case InputFormat::kZstd: return "zstd";
    case InputFormat::kLz4: return "lz4";
    case InputFormat::kXz: return "xz";
    case InputFormat::kGzip: return "gzip";
    case InputFormat::kApportReport: return "apport report";
    case InputFormat::kAbrtDirectory: return "ABRT problem directory";
    case InputFormat::kUnknown: break;
  }
  return "unknown";
}

}  // namespace hangpy::inputs
