#include "inputs/sparse_spool.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hangpy::inputs {
namespace {

// The granularity of holes: a page of the core is the smallest thing worth leaving out.
constexpr size_t kHoleBlock = 4096;
// How often the free space is looked at, in bytes written.
constexpr uint64_t kFreeSpaceCheckBytes = 16 << 20;

bool all_zero(std::span<const std::byte> data) {
  return std::all_of(data.begin(), data.end(), [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

Expected<SparseSpool> SparseSpool::create(std::string what) {
  const char* directory = std::getenv("TMPDIR");
  if (directory == nullptr || *directory == '\0') directory = "/tmp";
  int fd = open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    return make_error(ErrorKind::kIo, fmt::format("cannot make a temporary file in {} for {}: {}",
                                                  directory, what, std::strerror(errno)));
  }
  return SparseSpool(fd, directory, std::move(what));
}

SparseSpool::SparseSpool(SparseSpool&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      directory_(std::move(other.directory_)),
      what_(std::move(other.what_)),
      size_(other.size_),
      finished_(other.finished_),
      extent_(std::move(other.extent_)),
      must_be_elf_(other.must_be_elf_),
      ignored_(other.ignored_),
      written_since_check_(other.written_since_check_) {}

SparseSpool::~SparseSpool() {
  // A finished spool's descriptor is the core's path (/proc/self/fd/N): it stays open.
  if (fd_ >= 0 && !finished_) close(fd_);
}

Expected<void> SparseSpool::check_free_space() const {
  struct statvfs room {};
  if (fstatvfs(fd_, &room) != 0) return {};
  const uint64_t available = static_cast<uint64_t>(room.f_bavail) * room.f_frsize;
  if (available >= kFreeSpaceReserve) return {};
  return make_error(ErrorKind::kIo,
                    fmt::format("stopped writing {} to {} after {:.1f} MB: only {:.1f} MB are left there "
                                "(set TMPDIR to a file system with room for the core)",
                                what_, directory_, static_cast<double>(size_) / 1e6,
                                static_cast<double>(available) / 1e6));
}

Expected<void> SparseSpool::write_at(std::span<const std::byte> data, uint64_t offset) {
  for (size_t written = 0; written < data.size();) {
    ssize_t put = pwrite(fd_, data.data() + written, data.size() - written,
                         static_cast<off_t>(offset + written));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) {
      return make_error(ErrorKind::kIo, fmt::format("cannot write {} to {}: {}", what_, directory_,
                                                    std::strerror(errno)));
    }
    written += static_cast<size_t>(put);
  }
  return {};
}

Expected<void> SparseSpool::append(std::span<const std::byte> data) {
  extent_.feed(data);
  if (must_be_elf_ && extent_.is_elf() == false) {
    return make_error(ErrorKind::kInvalidInput, fmt::format("{} is not an ELF core (its first bytes say otherwise)", what_));
  }
  if (const std::optional<uint64_t> end = extent_.extent()) {
    const uint64_t room = *end > size_ ? *end - size_ : 0;
    if (data.size() > room) {
      ignored_ += data.size() - room;
      data = data.first(static_cast<size_t>(room));
    }
  }
  // Block boundaries are counted from the start of the file, so that a hole is page-aligned
  // however the producer cuts its output.
  while (!data.empty()) {
    const size_t into_block = size_ % kHoleBlock;
    const size_t count = std::min(data.size(), kHoleBlock - into_block);
    std::span<const std::byte> piece = data.first(count);
    if (!all_zero(piece)) {
      if (auto ok = write_at(piece, size_); !ok) return ok;
      written_since_check_ += piece.size();
      if (written_since_check_ >= kFreeSpaceCheckBytes) {
        written_since_check_ = 0;
        if (auto ok = check_free_space(); !ok) return ok;
      }
    }
    size_ += count;
    data = data.subspan(count);
  }
  return {};
}

Expected<std::string> SparseSpool::finish() {
  if (ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
    return make_error(ErrorKind::kIo, fmt::format("cannot write {} to {}: {}", what_, directory_,
                                                  std::strerror(errno)));
  }
  finished_ = true;
  return fmt::format("/proc/self/fd/{}", fd_);
}

}  // namespace hangpy::inputs
