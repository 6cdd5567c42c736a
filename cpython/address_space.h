// The read-only view of a target's memory that the engine walks. Implementations: a core file
// (coreanalyze/), a live process, a gdb inferior (gdbplugin/), an in-memory image (tests).
// Contract: read() fills all of `out` or fails; a failure carries the first address that could
// not be read. A page that a core did not save is an error (kNotSaved), never zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "base/error.h"

namespace hangpy::cpython {

class AddressSpace {
 public:
  virtual ~AddressSpace() = default;
  virtual Expected<void> read(uint64_t address, std::span<std::byte> out) const = 0;
  // read(), for a caller that uses only the bytes up to the first NUL (a C string read a chunk at
  // a time): a view that keeps what was read (a snapshot's recording) keeps only those, not the
  // neighbours the chunk ran over. Wrappers forward it.
  virtual Expected<void> read_c_string_chunk(uint64_t address, std::span<std::byte> out) const {
    return read(address, out);
  }
  // Which thread the reads that follow are made for (the stack walker names the thread whose
  // frames it walks; nullopt: no one thread's, such as the interpreter's list of threads): its OS
  // thread id, or where its thread state keeps none (before 3.11) its thread id (pthread_self()).
  // A live process's memory notes it per page, so that the pages read only for threads asleep in
  // the kernel are read anew before the stop rather than in it (live_target.h); other memories
  // ignore it.
  virtual void attribute_reads(std::optional<uint64_t> thread) const { (void)thread; }
};

// Reads a trivially copyable value of the target's (little-endian, LP64) representation.
template <typename T>
Expected<T> read_value(const AddressSpace& memory, uint64_t address) {
  static_assert(std::is_trivially_copyable_v<T>);
  T value{};
  auto bytes = std::as_writable_bytes(std::span<T, 1>(&value, 1));
  if (auto ok = memory.read(address, bytes); !ok) return std::unexpected(ok.error());
  return value;
}

inline Expected<uint64_t> read_pointer(const AddressSpace& memory, uint64_t address) {
  return read_value<uint64_t>(memory, address);
}

// Reads `size` bytes; callers cap `size` before calling (target sizes are never trusted).
inline Expected<std::vector<std::byte>> read_bytes(const AddressSpace& memory, uint64_t address,
                                                   size_t size) {
  std::vector<std::byte> buffer(size);
  if (auto ok = memory.read(address, buffer); !ok) return std::unexpected(ok.error());
  return buffer;
}

// Reads a NUL-terminated string of at most `max_length` bytes, page by page so that a string
// ending just before an unreadable page is still read.
Expected<std::string> read_c_string(const AddressSpace& memory, uint64_t address,
                                    size_t max_length);

}  // namespace hangpy::cpython
