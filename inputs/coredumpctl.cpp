#include "inputs/coredumpctl.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/last_line.h"

extern char** environ;

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
  const std::string errors = directory_template + "/stderr";
  const std::string output_option = "--output=" + core;
  std::vector<std::string> arguments = {*program, "dump", "--no-pager", "-q", match, output_option};
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errors.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t child = 0;
  int spawned = posix_spawn(&child, program->c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (spawned == 0) {
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  std::stringstream said;
  said << std::ifstream(errors).rdbuf();
  // The core stays open through its descriptor; its name and the directory go now.
  int fd = open(core.c_str(), O_RDONLY | O_CLOEXEC);
  unlink(core.c_str());
  unlink(errors.c_str());
  rmdir(directory_template.c_str());
  if (spawned != 0) {
    if (fd >= 0) close(fd);
    return make_error(ErrorKind::kIo, fmt::format("--coredumpctl: cannot run {}: {}", *program,
                                                  std::strerror(spawned)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || fd < 0) {
    if (fd >= 0) close(fd);
    std::string why = last_line(said.str());
    if (why.empty()) why = "it wrote no core";
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("--coredumpctl {}: coredumpctl dump failed: {}", match, why));
  }
  return fmt::format("/proc/self/fd/{}", fd);
}

}  // namespace hangpy::inputs
