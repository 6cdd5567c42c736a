#include "base/target_named_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace hangpy {
namespace {

constexpr int kOpenFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

bool is_machine_root(const std::string& root) { return root.empty() || root == "/"; }

Error open_error(const std::string& path, int error) {
  const ErrorKind kind = error == ENOENT || error == ENOTDIR ? ErrorKind::kNotFound : ErrorKind::kIo;
  return Error{kind, fmt::format("cannot open {}: {}", path, std::strerror(error)), std::nullopt};
}

std::optional<std::string> real_path(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr), &std::free);
  if (!resolved) return std::nullopt;
  return std::string(resolved.get());
}

bool within(const std::string& root, const std::string& path) {
  return root == "/" || path == root || (path.starts_with(root) && path[root.size()] == '/');
}

// openat2 with RESOLVE_IN_ROOT (Linux 5.6): -1 with errno ENOSYS where the kernel lacks it.
int open_in_root(const std::string& root, const std::string& path) {
  const int root_fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) return -1;
  open_how how{};
  how.flags = static_cast<uint64_t>(kOpenFlags);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  const int fd = static_cast<int>(::syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof(how)));
  const int saved = errno;
  ::close(root_fd);
  errno = saved;
  return fd;
}

}  // namespace

OpenedTargetFile::~OpenedTargetFile() {
  if (fd_ >= 0) ::close(fd_);
}

Expected<OpenedTargetFile> open_target_file(const std::string& root, const std::string& path) {
  int fd = -1;
  if (is_machine_root(root)) {
    fd = ::open(path.c_str(), kOpenFlags);
  } else {
    fd = open_in_root(root, path);
    if (fd < 0 && errno == ENOSYS) {
      // No openat2: the path is opened where it really lies, and only inside root.
      const std::optional<std::string> inside = path_inside_root(root, root + "/" + path);
      if (!inside) return make_error(ErrorKind::kNotFound, fmt::format("{} is not inside {}", path, root));
      fd = ::open(inside->c_str(), kOpenFlags);
    }
  }
  if (fd < 0) return std::unexpected(open_error(path, errno));
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    return make_error(ErrorKind::kInvalidInput, fmt::format("{} is not a regular file", path));
  }
  return OpenedTargetFile(fd, status);
}

bool process_could_read(const struct stat& status, std::optional<uint32_t> uid, std::optional<uint32_t> gid) {
  if (uid && *uid == 0) return true;
  if (uid && status.st_uid == *uid) return (status.st_mode & S_IRUSR) != 0;
  if (gid && status.st_gid == *gid) return (status.st_mode & S_IRGRP) != 0;
  return (status.st_mode & S_IROTH) != 0;
}

std::optional<std::string> path_inside_root(const std::string& root, const std::string& path) {
  const std::optional<std::string> resolved = real_path(path);
  if (!resolved) return std::nullopt;
  if (is_machine_root(root)) return resolved;
  const std::optional<std::string> resolved_root = real_path(root);
  if (!resolved_root || !within(*resolved_root, *resolved)) return std::nullopt;
  return resolved;
}

}  // namespace hangpy
