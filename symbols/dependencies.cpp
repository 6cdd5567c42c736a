#include "symbols/dependencies.h"

#include "base/split.h"

namespace hangpy::symbols {
namespace {

constexpr size_t kMaxDirectories = 16;
// Where glibc's dynamic linker looks last (its built-in path on Debian's x86-64), after
// ld.so.cache, which names files in these same directories.
constexpr const char* kSystemDirectories[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                                              "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib"};

std::vector<std::string> split_path_list(const std::string& list, const std::string& origin) {
  std::vector<std::string> directories;
  for (const std::string_view part : split_on(list, ':')) {
    if (directories.size() == kMaxDirectories) break;
    std::string directory(part);
    for (const char* token : {"$ORIGIN", "${ORIGIN}"}) {
      for (size_t found = directory.find(token); found != std::string::npos; found = directory.find(token))
        directory.replace(found, std::string(token).size(), origin);
    }
    if (!directory.empty()) directories.push_back(std::move(directory));
  }
  return directories;
}

}  // namespace

std::vector<std::string> library_candidates(const ElfFile& file, const std::string& sysroot) {
  const ElfFile::Dependencies dependencies = file.dependencies();
  const std::string origin = file.path().substr(0, file.path().rfind('/'));
  std::vector<std::string> directories = split_path_list(dependencies.run_path, origin);
  for (const char* system : kSystemDirectories) directories.push_back(sysroot + system);
  std::vector<std::string> candidates;
  for (const std::string& library : dependencies.needed) {
    if (library.find('/') != std::string::npos) continue;  // a name with a slash is a path of the target's
    for (const std::string& directory : directories) candidates.push_back(directory + "/" + library);
  }
  return candidates;
}

}  // namespace hangpy::symbols
