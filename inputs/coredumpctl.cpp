#include "inputs/coredumpctl.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "base/child_process.h"
#include "base/last_line.h"

namespace hangpy::inputs {
namespace {

std::optional<std::string> find_in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream directories(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string directory; std::getline(directories, directory, ':');) {
    if (directory.empty()) continue;
    std::string candidate = directory + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

}  // namespace

Expected<std::string> core_from_coredumpctl(const std::string& match) {
  auto program = find_in_path("coredumpctl");
  if (!program) {
    return make_error(ErrorKind::kNotFound,
                      "--coredumpctl: coredumpctl is not installed here (systemd-coredump keeps "
                      "cores only where it is); give the core file instead");
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string directory_template = fmt::format("{}/coreanalyze-XXXXXX", tmp != nullptr && *tmp ? tmp : "/tmp");
  if (mkdtemp(directory_template.data()) == nullptr) {
    return make_error(ErrorKind::kIo, fmt::format("--coredumpctl: cannot make a temporary "
                                                  "directory: {}", std::strerror(errno)));
  }
  const std::string core = directory_template + "/core";
  ChildCommand command({*program, "dump", "--no-pager", "-q", match, "--output=" + core}, std::nullopt, true,
                       std::string("/dev/null"));
  command.program = *program;
  command.stdout_to_null = true;
  // coredumpctl writes a core of any size from the journal's store: minutes at most.
  const ChildResult ran = run_child(command, std::chrono::minutes(10));
  // The core stays open through its descriptor; its name and the directory go now.
  int fd = open(core.c_str(), O_RDONLY | O_CLOEXEC);
  unlink(core.c_str());
  rmdir(directory_template.c_str());
  if (!ran.started) {
    if (fd >= 0) close(fd);
    return make_error(ErrorKind::kIo, fmt::format("--coredumpctl: cannot run {}", ran.start_error));
  }
  if (ran.exit_code != 0 || ran.timed_out || fd < 0) {
    if (fd >= 0) close(fd);
    std::string why = ran.timed_out ? std::string("it ran past 10 minutes and was stopped") : last_line(ran.errors);
    if (why.empty()) why = "it wrote no core";
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("--coredumpctl {}: coredumpctl dump failed: {}", match, why));
  }
  return fmt::format("/proc/self/fd/{}", fd);
}

}  // namespace hangpy::inputs
