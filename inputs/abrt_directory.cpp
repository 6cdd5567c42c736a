#include "inputs/abrt_directory.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace hangpy::coreanalyze {
namespace {

// A one-line item; anything longer is not what we look for.
constexpr size_t kMaxItemBytes = 64 * 1024;
// `maps` of a process with thousands of mappings (PyTorch: ~3000 lines of ~100 bytes).
constexpr size_t kMaxMapsBytes = 4 << 20;
// `environ`: the kernel's limit on arguments and environment together is 2 MB under the usual
// 8 MB stack limit.
constexpr size_t kMaxEnvironBytes = 8 << 20;

std::optional<std::string> read_item(const std::string& directory, const char* name,
                                     size_t max_bytes = kMaxItemBytes) {
  std::ifstream stream(directory + "/" + name, std::ios::binary);
  if (!stream) return std::nullopt;
  std::string text(max_bytes, '\0');
  stream.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(stream.gcount()));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  if (text.empty()) return std::nullopt;
  return text;
}

}  // namespace

Expected<AbrtProblem> read_abrt_directory(const std::string& directory) {
  AbrtProblem problem;
  problem.coredump_path = directory + "/coredump";
  if (access(problem.coredump_path.c_str(), R_OK) != 0) {
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("{} is an ABRT problem directory without a readable coredump "
                                  "file ({})",
                                  directory, std::strerror(errno)));
  }
  problem.executable = read_item(directory, "executable");
  problem.cmdline = read_item(directory, "cmdline");
  problem.pid = read_item(directory, "pid");
  problem.maps = read_item(directory, "maps", kMaxMapsBytes);
  problem.environment = read_item(directory, "environ", kMaxEnvironBytes);
  problem.hostname = read_item(directory, "hostname");
  return problem;
}

}  // namespace hangpy::coreanalyze
