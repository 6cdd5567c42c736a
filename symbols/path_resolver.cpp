#include "symbols/path_resolver.h"

#include <sys/stat.h>

#include <string_view>

#include "base/split.h"
#include "symbols/elf_file.h"

namespace hangpy::symbols {

std::string lexically_rooted(std::string_view path) {
  std::vector<std::string_view> parts;
  for (const std::string_view part : split_on(path, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string rooted;
  for (std::string_view part : parts) {
    rooted += '/';
    rooted += part;
  }
  return rooted.empty() ? "/" : rooted;
}

std::string_view base_name_view(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string base_name(std::string_view path) { return std::string(base_name_view(path)); }

PathResolver::PathResolver(std::string sysroot, std::vector<std::string> lib_paths)
    : sysroot_(std::move(sysroot)), lib_paths_(std::move(lib_paths)) {
  while (sysroot_.size() > 1 && sysroot_.back() == '/') sysroot_.pop_back();
}

std::vector<std::string> PathResolver::candidates(const std::string& recorded_path) const {
  std::vector<std::string> result;
  // gdb's gcore of a chrooted process records host paths that already lie inside the sysroot.
  const bool inside_sysroot = !sysroot_.empty() && recorded_path.starts_with(sysroot_ + "/");
  if (inside_sysroot) result.push_back(sysroot_ + lexically_rooted(std::string_view(recorded_path).substr(sysroot_.size())));
  if (!sysroot_.empty() && !inside_sysroot) {
    // A core's paths are its own: "/../../etc/shadow" must not climb out of the sysroot. Its
    // ".." are resolved by name, never above the root; the sysroot's own links are the user's.
    result.push_back(sysroot_ + lexically_rooted(recorded_path));
  }
  const std::string basename = base_name(recorded_path);
  if (!basename.empty()) {
    for (const std::string& directory : lib_paths_) result.push_back(directory + "/" + basename);
  }
  if (sysroot_.empty()) result.push_back(recorded_path);
  return result;
}

namespace {

// Whether `candidate` stands for the file: a regular file, of the expected build-id if it has one.
bool acceptable(const std::string& candidate, const std::optional<std::string>& expected_build_id,
                std::unique_ptr<ElfFile>* opened) {
  // stat(2) itself: std::filesystem parses the path into components first, which cost as much
  // as the call when a core maps hundreds of files.
  struct stat status {};
  if (::stat(candidate.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return false;
  if (expected_build_id) {
    auto file = ElfFile::open(candidate);
    if (file && (*file)->build_id() && *(*file)->build_id() != *expected_build_id) return false;
    if (file && opened != nullptr) *opened = std::move(*file);
  }
  return true;
}

}  // namespace

std::optional<std::string> PathResolver::resolve(const std::string& recorded_path,
                                                 const std::optional<std::string>& expected_build_id,
                                                 std::unique_ptr<ElfFile>* opened) const {
  // Without a sysroot or library directories the recorded path is the one candidate: asked
  // without building the list (a torch rank's ~300 files are each asked for).
  if (sysroot_.empty() && lib_paths_.empty()) {
    if (acceptable(recorded_path, expected_build_id, opened)) return recorded_path;
    return std::nullopt;
  }
  for (const std::string& candidate : candidates(recorded_path)) {
    if (acceptable(candidate, expected_build_id, opened)) return candidate;
  }
  return std::nullopt;
}

bool PathResolver::finds(const std::string& recorded_path) const {
  if (sysroot_.empty() && lib_paths_.empty()) return acceptable(recorded_path, std::nullopt, nullptr);
  return resolve(recorded_path).has_value();
}

}  // namespace hangpy::symbols
