#include "base/anonymous_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace hangpy {

int anonymous_file(const char* name) {
  const long memory_file = syscall(SYS_memfd_create, name, MFD_CLOEXEC);
  if (memory_file >= 0) return static_cast<int>(memory_file);
  return unlinked_temporary_file(name);
}

int unlinked_temporary_file(const char* name) {
  const char* directory = std::getenv("TMPDIR");
  if (!directory || !*directory) directory = "/tmp";
  std::string path = std::string(directory) + "/" + name + "-XXXXXX";
  const int file = mkostemp(path.data(), O_CLOEXEC);
  if (file < 0) return -1;
  unlink(path.c_str());
  return file;
}

}  // namespace hangpy
