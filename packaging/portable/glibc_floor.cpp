// Two symbols the portable build (packaging/portable/portable.cmake) must supply itself. It links
// against an old glibc (Debian 11's 2.31) so that coreanalyze and the gdb module run on old
// systems, but it compiles with Debian 12's gcc 12, whose static libstdc++ was built against glibc
// 2.36 and refers to two symbols that 2.31 lacks. Nothing here runs in the normal build.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

extern "C" {

// glibc 2.32's flag for "the process has only ever had one thread", which libstdc++ reads to skip
// atomic reference counting. Zero means "maybe threaded": libstdc++ then always uses atomics,
// which is correct everywhere and what it did before glibc had the flag.
[[gnu::visibility("hidden")]] char __libc_single_threaded = 0;

// glibc 2.36's arc4random, which libstdc++'s std::random_device offers as one of its sources and
// which is linked in whether or not anything asks for it (nothing in hangpy does). The kernel's
// getrandom through syscall(2), not glibc's getrandom(3): that wrapper is 2.25's, and the system
// call alone keeps the floor lower.
[[gnu::visibility("hidden")]] uint32_t arc4random(void) {
  uint32_t value = 0;
  while (syscall(SYS_getrandom, &value, sizeof value, 0) != static_cast<long>(sizeof value)) {
  }
  return value;
}

}  // extern "C"
