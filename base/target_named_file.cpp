#include "base/target_named_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/statfs.h>
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

// File systems whose "files" are the kernel's views, not contents anyone wrote: reading one shows
// whatever it shows for the reader (/proc/self/environ is the reader's own environment). Magic
// numbers of linux/magic.h, written out because that header is not in every build environment.
bool pseudo_file_system(int fd) {
  struct statfs info {};
  if (::fstatfs(fd, &info) != 0) return true;  // unknown: not trusted
  switch (static_cast<uint64_t>(info.f_type)) {
    case 0x9fa0:      // proc
    case 0x62656572:  // sysfs
    case 0x64626720:  // debugfs
    case 0x74726163:  // tracefs
    case 0x27e0eb:    // cgroup
    case 0x63677270:  // cgroup2
    case 0x73636673:  // securityfs
    case 0xcafe4a11:  // bpf
    case 0x62656570:  // configfs
    case 0xde5e81e4:  // efivarfs
    case 0x6165676c:  // pstore
    case 0xf97cff8c:  // selinuxfs
    case 0x65735543:  // fusectl
    case 0x1cd1:      // devpts
    case 0x42494e4d:  // binfmt_misc
      return true;
    default:
      return false;
  }
}

// An O_PATH descriptor of `path`: it names the file without opening it, so a device or a FIFO
// never sees an open (a watchdog arming, a tape rewinding). openat2 (Linux 5.6) resolves without
// magic links (/proc/self/cwd and the like would lead to this program's own files) and, inside a
// root, as if the root were "/"; -1 with errno ENOSYS where the kernel lacks it.
int open_path_in_root(const std::string& root, const std::string& path) {
  int root_fd = AT_FDCWD;
  if (!is_machine_root(root)) {
    root_fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0) return -1;
  }
  open_how how{};
  how.flags = static_cast<uint64_t>(O_PATH | O_CLOEXEC);
  how.resolve = RESOLVE_NO_MAGICLINKS | (is_machine_root(root) ? 0 : RESOLVE_IN_ROOT);
  const int fd = static_cast<int>(::syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof(how)));
  const int saved = errno;
  if (root_fd != AT_FDCWD) ::close(root_fd);
  errno = saved;
  return fd;
}

}  // namespace

OpenedTargetFile::~OpenedTargetFile() {
  if (fd_ >= 0) ::close(fd_);
}

Expected<OpenedTargetFile> open_target_file(const std::string& root, const std::string& path) {
  int path_fd = open_path_in_root(root, path);
  if (path_fd < 0 && errno == ENOSYS) {
    // No openat2: the path is taken where it really lies, and only inside root.
    std::string where = path;
    if (!is_machine_root(root)) {
      const std::optional<std::string> inside = path_inside_root(root, root + "/" + path);
      if (!inside) return make_error(ErrorKind::kNotFound, fmt::format("{} is not inside {}", path, root));
      where = *inside;
    }
    path_fd = ::open(where.c_str(), O_PATH | O_CLOEXEC);
  }
  if (path_fd < 0) return std::unexpected(open_error(path, errno));
  struct stat named {};
  const bool regular = ::fstat(path_fd, &named) == 0 && S_ISREG(named.st_mode);
  if (!regular || pseudo_file_system(path_fd)) {
    ::close(path_fd);
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("{} is not a regular file of an ordinary file system", path));
  }
  // Opened for reading only now that it is known to be a plain file: through the descriptor
  // itself, so that nothing renamed in between is read instead.
  const int fd = ::open(fmt::format("/proc/self/fd/{}", path_fd).c_str(), kOpenFlags);
  const int saved = errno;
  ::close(path_fd);
  if (fd < 0) return std::unexpected(open_error(path, saved));
  struct stat status {};
  if (::fstat(fd, &status) != 0 || status.st_dev != named.st_dev || status.st_ino != named.st_ino) {
    ::close(fd);
    return make_error(ErrorKind::kInvalidInput, fmt::format("{} changed while it was opened", path));
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
