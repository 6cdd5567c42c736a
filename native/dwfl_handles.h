// RAII owners for the elfutils handles the libdwfl unwinder holds, so that every path out of a
// function (errors included) releases them in the right order.
#pragma once

#include <elfutils/libdwfl.h>
#include <libelf.h>
#include <unistd.h>

#include <memory>

namespace hangpy::native {

struct DwflEnd {
  void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
};
struct ElfEnd {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using DwflHandle = std::unique_ptr<Dwfl, DwflEnd>;
using ElfHandle = std::unique_ptr<Elf, ElfEnd>;

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { reset(); }

  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

}  // namespace hangpy::native
