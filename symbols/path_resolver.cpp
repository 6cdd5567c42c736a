#include "symbols/path_resolver.h"

#include <filesystem>
#include <system_error>

#include "symbols/elf_file.h"

namespace hangpy::symbols {

PathResolver::PathResolver(std::string sysroot, std::vector<std::string> lib_paths)
    : sysroot_(std::move(sysroot)), lib_paths_(std::move(lib_paths)) {
  while (sysroot_.size() > 1 && sysroot_.back() == '/') sysroot_.pop_back();
}

std::vector<std::string> PathResolver::candidates(const std::string& recorded_path) const {
  std::vector<std::string> result;
  // gdb's gcore of a chrooted process records host paths that already lie inside the sysroot.
  const bool inside_sysroot = !sysroot_.empty() && recorded_path.starts_with(sysroot_ + "/");
  if (inside_sysroot) result.push_back(recorded_path);
  if (!sysroot_.empty() && !inside_sysroot) {
    const bool needs_slash = recorded_path.empty() || recorded_path.front() != '/';
    result.push_back(sysroot_ + (needs_slash ? "/" : "") + recorded_path);
  }
  const std::string basename = std::filesystem::path(recorded_path).filename().string();
  if (!basename.empty()) {
    for (const std::string& directory : lib_paths_) result.push_back(directory + "/" + basename);
  }
  if (sysroot_.empty()) result.push_back(recorded_path);
  return result;
}

std::optional<std::string> PathResolver::resolve(
    const std::string& recorded_path, const std::optional<std::string>& expected_build_id) const {
  for (const std::string& candidate : candidates(recorded_path)) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(candidate, error)) continue;
    if (expected_build_id) {
      auto file = ElfFile::open(candidate);
      if (file && (*file)->build_id() && *(*file)->build_id() != *expected_build_id) continue;
    }
    return candidate;
  }
  return std::nullopt;
}

}  // namespace hangpy::symbols
