#include "cpython/version_probe.h"

#include <string_view>

#include "base/parse_number.h"

namespace hangpy::cpython {

PythonVersion version_from_hex(uint64_t hex) {
  PythonVersion version;
  version.major = static_cast<int>((hex >> 24) & 0xff);
  version.minor = static_cast<int>((hex >> 16) & 0xff);
  version.micro = static_cast<int>((hex >> 8) & 0xff);
  return version;
}

namespace {

// A cursor over version text. Hand-written rather than std::regex: the two grammars are tiny, and
// constructing the regexes cost a third of a small core's whole analysis.
struct VersionText {
  std::string_view rest;

  bool take(std::string_view prefix) {
    if (rest.substr(0, prefix.size()) != prefix) return false;
    rest.remove_prefix(prefix.size());
    return true;
  }
  // One or more digits (at most `max_digits`), as text; empty when there is no digit.
  std::string_view digits(size_t max_digits = std::string_view::npos) {
    size_t count = 0;
    while (count < rest.size() && count < max_digits && rest[count] >= '0' && rest[count] <= '9')
      ++count;
    std::string_view taken = rest.substr(0, count);
    rest.remove_prefix(count);
    return taken;
  }
};

}  // namespace

// "X.Y", "X.Y.Z", each with an optional "t" (free-threaded) at the end.
std::optional<PythonVersion> parse_version(std::string_view text) {
  VersionText cursor{text};
  std::string_view major_text = cursor.digits();
  if (major_text.empty() || !cursor.take(".")) return std::nullopt;
  std::string_view minor_text = cursor.digits();
  if (minor_text.empty()) return std::nullopt;
  std::optional<int> micro = -1;
  if (cursor.take(".")) {
    std::string_view micro_text = cursor.digits();
    if (micro_text.empty()) return std::nullopt;
    micro = parse_decimal<int>(micro_text);
  }
  const bool free_threaded = cursor.take("t");
  if (!cursor.rest.empty()) return std::nullopt;
  // The numbers can be anything a user typed or a corrupt core holds: out of range is no version.
  auto major = parse_decimal<int>(major_text);
  auto minor = parse_decimal<int>(minor_text);
  if (!major || !minor || !micro) return std::nullopt;
  PythonVersion version;
  version.major = *major;
  version.minor = *minor;
  version.micro = *micro;
  version.free_threaded = free_threaded;
  return version;
}

// "python3.11", "libpython3.13t.so.1.0", "python3.7m", "libpython3.13td.so": a one-digit major,
// the minor, "t" for free-threaded, an ABI flag suffix, then the end or ".so".
std::optional<PythonVersion> version_from_file_name(std::string_view path) {
  auto slash = path.rfind('/');
  VersionText cursor{slash == std::string_view::npos ? path : path.substr(slash + 1)};
  cursor.take("lib");
  if (!cursor.take("python")) return std::nullopt;
  std::string_view major_text = cursor.digits(1);
  if (major_text.empty() || !cursor.take(".")) return std::nullopt;
  std::string_view minor_text = cursor.digits();
  if (minor_text.empty()) return std::nullopt;
  const bool free_threaded = cursor.take("t");
  for (std::string_view flags : {"dm", "tm", "td", "d", "m"}) {
    if (cursor.take(flags)) break;
  }
  cursor.take("-dbg");  // Debian's debug interpreters: python2.7-dbg
  if (!cursor.rest.empty() && !cursor.take(".so")) return std::nullopt;
  auto major = parse_decimal<int>(major_text);
  auto minor = parse_decimal<int>(minor_text);
  if (!major || !minor) return std::nullopt;
  PythonVersion version;
  version.major = *major;
  version.minor = *minor;
  version.free_threaded = free_threaded;
  return version;
}

std::optional<VersionFinding> probe_version(const Target& target) {
  std::optional<PythonVersion> from_name;
  std::string name_source;
  for (const MappedModule& module : target.modules()) {
    if (auto version = version_from_file_name(module.path)) {
      from_name = version;
      name_source = "file name " + module.path;
      break;
    }
  }
  // Py_Version (3.11 on) holds PY_VERSION_HEX; it cannot tell a free-threaded build apart, but
  // the file name (libpython3.13t.so) can.
  if (auto address = target.find_symbol("Py_Version")) {
    if (auto hex = read_value<uint64_t>(target.memory(), *address)) {
      PythonVersion version = version_from_hex(*hex & 0xffffffff);
      if (version.major >= 3 && version.minor >= 11 && version.minor < 64) {
        if (from_name && from_name->major == version.major && from_name->minor == version.minor)
          version.free_threaded = from_name->free_threaded;
        return VersionFinding{version, "Py_Version"};
      }
    }
  }
  if (from_name) return VersionFinding{*from_name, name_source};
  return std::nullopt;
}

}  // namespace hangpy::cpython
