// Symbols the portable build (packaging/portable/portable.cmake) supplies itself. It links against
// an old glibc (Debian 11's 2.31) so that coreanalyze and the gdb module run on old systems, but it
// compiles with Debian 12's gcc 12, whose static libstdc++ was built against glibc 2.36 and refers
// to symbols that older glibcs lack: 2.31 lacks __libc_single_threaded and arc4random, and
// getentropy (2.25) would set the floor above RHEL 7's and Ubuntu 16.04's. libstdc++ needs the
// last two only for std::random_device, which hangpy never uses. Nothing here is in the normal
// build.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

// `size` random bytes from the kernel: getrandom(2) through syscall(2) (glibc's wrapper is 2.25's),
// or /dev/urandom where the kernel predates getrandom (3.17). False when neither gives them.
bool kernel_random_bytes(void* buffer, size_t size) {
  auto* bytes = static_cast<unsigned char*>(buffer);
  size_t done = 0;
  while (done < size) {
    const long got = syscall(SYS_getrandom, bytes + done, size - done, 0);
    if (got > 0) {
      done += static_cast<size_t>(got);
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  if (done == size) return true;
  const int device = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (device < 0) return false;
  while (done < size) {
    const ssize_t got = read(device, bytes + done, size - done);
    if (got > 0) {
      done += static_cast<size_t>(got);
    } else if (!(got < 0 && errno == EINTR)) {
      break;
    }
  }
  close(device);
  return done == size;
}

}  // namespace

extern "C" {

// glibc 2.32's flag for "the process has only ever had one thread", which libstdc++ reads to skip
// atomic reference counting. Zero means "maybe threaded": libstdc++ then always uses atomics,
// which is correct everywhere and what it did before glibc had the flag.
[[gnu::visibility("hidden")]] char __libc_single_threaded = 0;

// glibc 2.36's arc4random. It cannot fail; with no source of randomness at all the process stops
// rather than hand out predictable numbers.
[[gnu::visibility("hidden")]] uint32_t arc4random(void) {
  uint32_t value = 0;
  if (!kernel_random_bytes(&value, sizeof value)) abort();
  return value;
}

// glibc 2.25's getentropy: at most 256 bytes, 0 or -1 with errno.
[[gnu::visibility("hidden")]] int getentropy(void* buffer, size_t size) {
  if (size > 256) {
    errno = EIO;
    return -1;
  }
  if (!kernel_random_bytes(buffer, size)) {
    errno = ENOSYS;
    return -1;
  }
  return 0;
}

}  // extern "C"
