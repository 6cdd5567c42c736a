#include "cpython/version_probe.h"

#include <regex>

#include "base/parse_number.h"

namespace hangpy::cpython {

PythonVersion version_from_hex(uint64_t hex) {
  PythonVersion version;
  version.major = static_cast<int>((hex >> 24) & 0xff);
  version.minor = static_cast<int>((hex >> 16) & 0xff);
  version.micro = static_cast<int>((hex >> 8) & 0xff);
  return version;
}

std::optional<PythonVersion> parse_version(std::string_view text) {
  static const std::regex kPattern(R"(^(\d+)\.(\d+)(?:\.(\d+))?(t?)$)");
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_match(text.begin(), text.end(), match, kPattern)) return std::nullopt;
  // The numbers can be anything a user typed or a corrupt core holds: out of range is no version.
  auto major = parse_decimal<int>(match[1].str());
  auto minor = parse_decimal<int>(match[2].str());
  auto micro = match[3].matched ? parse_decimal<int>(match[3].str()) : std::optional<int>(-1);
  if (!major || !minor || !micro) return std::nullopt;
  PythonVersion version;
  version.major = *major;
  version.minor = *minor;
  version.micro = *micro;
  version.free_threaded = match[4].length() > 0;
  return version;
}

std::optional<PythonVersion> version_from_file_name(std::string_view path) {
  auto slash = path.rfind('/');
  std::string name(slash == std::string_view::npos ? path : path.substr(slash + 1));
  static const std::regex kPattern(R"(^(?:lib)?python(\d)\.(\d+)(t?)(?:d|m|dm|tm|td)?(?:\.so.*|$))");
  std::smatch match;
  if (!std::regex_search(name, match, kPattern)) return std::nullopt;
  auto major = parse_decimal<int>(match[1].str());
  auto minor = parse_decimal<int>(match[2].str());
  if (!major || !minor) return std::nullopt;
  PythonVersion version;
  version.major = *major;
  version.minor = *minor;
  version.free_threaded = match[3].length() > 0;
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
