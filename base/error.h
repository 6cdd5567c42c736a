// The one error type of hangpy: every fallible operation returns Expected<T>, whose error says
// what failed and, for a memory read, at which target address. Nothing throws across layers.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace hangpy {

enum class ErrorKind {
  kUnmapped,      // no mapping of the target covers the address
  kNotSaved,      // mapped in the process, but the core did not save the page
  kCorrupt,       // the data read makes no sense (bad size, cycle, wrong type)
  kNotFound,      // a symbol, file or structure is absent
  kUnsupported,   // a format or version we do not handle
  kIo,            // the host failed to open or read a file
  kInvalidInput,  // the user gave us something that is not what it should be
};

struct Error {
  ErrorKind kind;
  std::string message;
  std::optional<uint64_t> address;  // the faulting target address, when there is one

  std::string describe() const {
    if (address) return fmt::format("{} (at 0x{:x})", message, *address);
    return message;
  }
};

template <typename T>
using Expected = std::expected<T, Error>;

inline std::unexpected<Error> make_error(ErrorKind kind, std::string message,
                                         std::optional<uint64_t> address = std::nullopt) {
  return std::unexpected<Error>(Error{kind, std::move(message), address});
}

}  // namespace hangpy
