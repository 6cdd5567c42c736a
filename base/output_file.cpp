#include "base/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ext/stdio_filebuf.h>
#include <filesystem>

namespace hangpy {

Expected<void> check_not_an_input(const std::string& path, const std::vector<std::string>& inputs) {
  struct stat output{};
  if (stat(path.c_str(), &output) != 0) return {};  // nothing there yet: nothing to destroy
  for (const std::string& input : inputs) {
    struct stat read{};
    if (stat(input.c_str(), &read) == 0 && read.st_dev == output.st_dev &&
        read.st_ino == output.st_ino) {
      return make_error(ErrorKind::kInvalidInput,
                        fmt::format("{} is {}, which this analysis reads; not overwriting it",
                                    path, input == path ? "an input" : "the same file as " + input));
    }
  }
  return {};
}

Expected<void> write_file_atomically(const std::string& path,
                                     const std::function<void(std::ostream&)>& write) {
  std::filesystem::path target(path);
  // mkstemp's template: it replaces the six X with a unique suffix. Beside the target, so that
  // the final rename stays within one file system.
  std::string pattern =
      (target.parent_path() / ("." + target.filename().string() + ".XXXXXX")).string();
  int descriptor = mkstemp(pattern.data());
  if (descriptor < 0) {
    return make_error(ErrorKind::kIo,
                      fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  int error = 0;
  {
    // libstdc++'s filebuf over our descriptor: std::ofstream cannot open a mkstemp() file.
    __gnu_cxx::stdio_filebuf<char> buffer(descriptor, std::ios::out | std::ios::binary);
    std::ostream out(&buffer);
    write(out);
    out.flush();
    if (!out) error = errno != 0 ? errno : EIO;
    if (error == 0 && fsync(descriptor) != 0) error = errno;
  }  // the filebuf closes the descriptor
  if (error == 0 && std::rename(pattern.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    unlink(pattern.c_str());
    return make_error(ErrorKind::kIo, fmt::format("cannot write {}: {}", path, std::strerror(error)));
  }
  // mkstemp made it 0600, and so it stays: a snapshot holds what the process had in memory (with
  // --locals, values of its variables), and its owner decides whom to show it to.
  return {};
}

}  // namespace hangpy
