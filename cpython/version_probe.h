// Which CPython a target runs, in the order of trust: the Py_Version constant (3.11 on), then the
// interpreter's file names (python3.11, libpython3.11.so, libpython3.13t.so).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cpython/stacks.h"
#include "cpython/target.h"

namespace hangpy::cpython {

struct VersionFinding {
  PythonVersion version;
  std::string source;  // "Py_Version", "file name libpython3.11.so.1.0"
};

std::optional<VersionFinding> probe_version(const Target& target);

// "3.11", "3.13t", "3.11.7"; nullopt when the text is not a version.
std::optional<PythonVersion> parse_version(std::string_view text);

// The version a file name names: "libpython3.11.so.1.0" -> 3.11, "python2.7" -> 2.7.
std::optional<PythonVersion> version_from_file_name(std::string_view path);

// Decodes PY_VERSION_HEX (0x030b07f0 -> 3.11.7).
PythonVersion version_from_hex(uint64_t hex);

}  // namespace hangpy::cpython
