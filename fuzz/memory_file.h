// A fuzzer input as a file the readers can open by path: an anonymous memory file (memfd), so
// that a run touches no disk and leaves nothing behind. One memfd serves every input of a run,
// overwritten and cut to the input's size: a new one for each input cost its pages' clearing
// again (fuzz_core's inputs are cores of up to 512 KB).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace hangpy::fuzz {

class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) : fd_(shared_fd()) {
    ok_ = fd_ >= 0 && ftruncate(fd_, static_cast<off_t>(size)) == 0;
    size_t written = 0;
    while (ok_ && written < size) {
      const ssize_t n = pwrite(fd_, data + written, size - written, static_cast<off_t>(written));
      if (n <= 0) ok_ = false;
      else written += static_cast<size_t>(n);
    }
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  bool ok() const { return ok_; }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  static int shared_fd() {
    static const int fd = memfd_create("hangpy-fuzz", MFD_CLOEXEC);
    return fd;
  }

  int fd_;
  bool ok_ = false;
};

// A directory for files a target must reach by a real name (a source file named .py, a snapshot
// renamed into place): under /dev/shm (memory) where it exists, made once per run, emptied and
// removed at exit.
inline const std::string& scratch_directory() {
  // Never destroyed: the exit handler that removes the directory runs after static destructors
  // of objects made before it was registered.
  static const std::string* path = [] {
    auto made = new std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm/hangpy-fuzz-XXXXXX"
                                                               : "/tmp/hangpy-fuzz-XXXXXX");
    if (mkdtemp(made->data()) == nullptr) made->clear();
    else std::atexit([] { std::filesystem::remove_all(*path); });
    return made;
  }();
  return *path;
}

}  // namespace hangpy::fuzz
