// Finds, on the analysing machine, the file a core recorded under a path of the machine that
// dumped it: under a sysroot, in library directories searched by file name, or (with no sysroot)
// at the recorded path itself.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hangpy::symbols {

class ElfFile;

class PathResolver {
 public:
  // An empty sysroot means "none": the recorded path is then tried as is, last.
  PathResolver(std::string sysroot, std::vector<std::string> lib_paths);

  // The first candidate that exists as a regular file, in this order: sysroot + recorded_path,
  // each lib_path + "/" + basename(recorded_path), recorded_path (only without a sysroot).
  // With an expected build-id, a candidate whose own build-id differs is skipped; one without a
  // build-id (or not an ELF file) is accepted. `opened`, when given, receives the file opened to
  // read the chosen candidate's build-id (none without an expected build-id), so that a caller
  // that opens it next does not map it twice.
  std::optional<std::string> resolve(
      const std::string& recorded_path,
      const std::optional<std::string>& expected_build_id = {},
      std::unique_ptr<ElfFile>* opened = nullptr) const;
  // Whether resolve(recorded_path) finds a file, without making its path (a torch rank's ~300
  // mapped files are each asked for once, for the one "cannot find" warning).
  bool finds(const std::string& recorded_path) const;

  // The candidates resolve() tries, in order (for messages and tests).
  std::vector<std::string> candidates(const std::string& recorded_path) const;

 private:
  std::string sysroot_;
  std::vector<std::string> lib_paths_;
};

// `path` as an absolute path with its "." and ".." resolved by name, never above "/":
// "/../../etc/shadow" is "/etc/shadow", "a/../../b" is "/b".
std::string lexically_rooted(std::string_view path);

// What follows the last '/' of a path (the whole path when it has none; "" when it ends in '/').
std::string base_name(std::string_view path);
// The same, as a view into `path`.
std::string_view base_name_view(std::string_view path);

}  // namespace hangpy::symbols
