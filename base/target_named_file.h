// Files a target names (a frame's co_filename, a mapped file's path in a core's notes) are
// untrusted paths: a core or a process can name /dev/zero, a FIFO, /dev/tty, /etc/shadow, or
// "/../../etc/shadow" to escape --sysroot. These open such a path for reading inside a root
// only (`..` and symbolic links never leave it), without blocking (a FIFO with no writer), without
// becoming the controlling terminal, and only when it is a regular file.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>

#include "base/error.h"

namespace hangpy {

// An open regular file; closed with the object.
class OpenedTargetFile {
 public:
  OpenedTargetFile(int fd, const struct stat& status) : fd_(fd), status_(status) {}
  OpenedTargetFile(OpenedTargetFile&& other) noexcept : fd_(other.fd_), status_(other.status_) { other.fd_ = -1; }
  OpenedTargetFile& operator=(OpenedTargetFile&&) = delete;
  OpenedTargetFile(const OpenedTargetFile&) = delete;
  ~OpenedTargetFile();
  int fd() const { return fd_; }
  const struct stat& status() const { return status_; }

 private:
  int fd_;
  struct stat status_;
};

// `path` opened inside `root` ("" or "/": this machine's root, where no confinement is needed;
// "/proc/PID/root" for a live process's own files): resolved by the kernel as if `root` were "/"
// (openat2's RESOLVE_IN_ROOT; on kernels without it, a path whose real location is outside root
// is refused), never through a magic link (/proc/self/cwd/...). The file is first only named
// (O_PATH), and opened for reading once it is known to be a regular file on an ordinary file
// system: a device is never opened, and procfs, sysfs, debugfs, cgroupfs and their kind, whose
// contents depend on who reads them (/proc/self/environ), are refused. The reading open goes
// through /proc/self/fd, so /proc must be mounted where this runs. Errors: kNotFound (no such
// file, or outside root), kInvalidInput (not a regular file of an ordinary file system), kIo
// (anything else: no permission...).
Expected<OpenedTargetFile> open_target_file(const std::string& root, const std::string& path);

// Whether the process with `uid` and `gid` could read the file itself by its mode bits (root
// could read anything); nullopt uid: a process that could read only what anyone can.
bool process_could_read(const struct stat& status, std::optional<uint32_t> uid, std::optional<uint32_t> gid);

// Where `path` lies once every link is followed, when that is inside `root` ("" or "/": anywhere);
// nullopt when it does not exist or leaves root. For files found by path and opened later by it
// (a core's mapped files under --sysroot).
std::optional<std::string> path_inside_root(const std::string& root, const std::string& path);

}  // namespace hangpy
