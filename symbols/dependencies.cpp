#include "symbols/dependencies.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <memory>

#include "base/split.h"

namespace hangpy::symbols {
namespace {

constexpr size_t kMaxNeeded = 64;
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

std::vector<std::string> library_candidates(const std::string& path, const std::string& sysroot) {
  elf_version(EV_CURRENT);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  std::unique_ptr<Elf, decltype(&elf_end)> elf(elf_begin(fd, ELF_C_READ, nullptr), &elf_end);
  std::vector<std::string> needed;
  std::string run_path;
  Elf_Scn* section = nullptr;
  while (elf && (section = elf_nextscn(elf.get(), section)) != nullptr) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr || header.sh_type != SHT_DYNAMIC) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    if (data == nullptr || header.sh_entsize == 0) break;
    const size_t count = header.sh_size / header.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Dyn entry;
      if (gelf_getdyn(data, static_cast<int>(i), &entry) == nullptr || entry.d_tag == DT_NULL) break;
      if (entry.d_tag != DT_NEEDED && entry.d_tag != DT_RPATH && entry.d_tag != DT_RUNPATH) continue;
      const char* text = elf_strptr(elf.get(), header.sh_link, entry.d_un.d_val);
      if (text == nullptr) continue;
      if (entry.d_tag == DT_NEEDED && needed.size() < kMaxNeeded) needed.emplace_back(text);
      else if (entry.d_tag != DT_NEEDED) run_path = text;
    }
    break;
  }
  ::close(fd);
  const std::string origin = path.substr(0, path.rfind('/'));
  std::vector<std::string> directories = split_path_list(run_path, origin);
  for (const char* system : kSystemDirectories) directories.push_back(sysroot + system);
  std::vector<std::string> candidates;
  for (const std::string& library : needed) {
    if (library.find('/') != std::string::npos) continue;  // a name with a slash is a path of the target's
    for (const std::string& directory : directories) candidates.push_back(directory + "/" + library);
  }
  return candidates;
}

}  // namespace hangpy::symbols
