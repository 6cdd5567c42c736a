#include "inputs/abrt_directory.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/parse_number.h"
#include "base/printable.h"

namespace hangpy::inputs {
namespace {

// A one-line item; anything longer is not what we look for.
constexpr size_t kMaxItemBytes = 64 * 1024;
// `maps` of a process with thousands of mappings (PyTorch: ~3000 lines of ~100 bytes).
constexpr size_t kMaxMapsBytes = 4 << 20;
// `open_fds`: a process may hold a million descriptors; the few a blocked thread uses are among
// the first thousands.
constexpr size_t kMaxOpenFdsBytes = 4 << 20;
constexpr size_t kMaxOpenFds = 65536;
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
  problem.open_fds = read_item(directory, "open_fds", kMaxOpenFdsBytes);
  return problem;
}

std::map<int64_t, std::string> parse_abrt_open_fds(std::string_view text) {
  std::map<int64_t, std::string> files;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos || colon > 10) continue;
    const std::optional<int64_t> fd = parse_decimal<int64_t>(line.substr(0, colon));
    if (!fd || *fd < 0 || files.size() >= kMaxOpenFds) continue;
    files[*fd] = printable(line.substr(colon + 1));
  }
  return files;
}

}  // namespace hangpy::inputs
