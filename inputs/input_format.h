// What a coreanalyze input is, told by its content (magic bytes, directory layout), never by its
// name: systemd-coredump names a zstd core core.python3.1000.<id>.zst, but a user renames files.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "base/error.h"

namespace hangpy::inputs {

enum class InputFormat {
  kElf,            // a plain core (or any ELF file: the core reader says if it is no core)
  kZstd,           // systemd-coredump's default compression
  kLz4,            // LZ4 frame format (systemd-coredump built with lz4)
  kXz,             // xz (systemd-coredump built with xz)
  kGzip,           // gzip or zlib: what apport puts inside its CoreDump field
  kApportReport,   // an apport .crash file (ProblemType: ... fields)
  kAbrtDirectory,  // an ABRT problem directory
  kUnknown,
};

// The bytes a decision needs at most from the start of a file.
inline constexpr size_t kFormatProbeBytes = 64;

// The format of a file starting with `head` (its first kFormatProbeBytes bytes, or all of a
// shorter file).
InputFormat format_of_file_start(std::span<const std::byte> head);
// Whether a directory holding `has_file(name)` files is an ABRT problem directory: the files ABRT
// always writes (executable or cmdline, and time, pid, analyzer or type). Its coredump may be
// missing (ABRT drops it for space): the reader says so.
template <typename HasFile>
bool is_abrt_layout(HasFile&& has_file) {
  return (has_file("executable") || has_file("cmdline")) &&
         (has_file("time") || has_file("pid") || has_file("analyzer") || has_file("type"));
}

// The format of the file or directory at `path`. Errors: kIo (cannot open or read it).
Expected<InputFormat> format_of_path(const std::string& path);

std::string_view format_name(InputFormat format);

}  // namespace hangpy::inputs
