#include "jobs/graphviz.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "jobs/anonymous_file.h"

extern char** environ;

namespace hangpy::jobs {
namespace {

std::string find_dot() {
  const char* path = std::getenv("PATH");
  std::stringstream directories(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string directory; std::getline(directories, directory, ':');) {
    if (directory.empty()) continue;
    std::string candidate = directory + "/dot";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t got; (got = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(got));
  return text;
}

}  // namespace

Expected<void> write_svg_with_dot(const std::string& dot_text, const std::string& svg_path) {
  const std::string dot = find_dot();
  if (dot.empty()) {
    return make_error(ErrorKind::kNotFound,
                      fmt::format("--svg {}: Graphviz's dot is not installed (apt-get install "
                                  "graphviz), or write DOT with --dot and draw it elsewhere", svg_path));
  }
  // The DOT text goes in through a memory file, so that no pipe can fill while dot waits.
  const int input = anonymous_file("coreanalyze-triage-dot");
  const int errors = anonymous_file("coreanalyze-triage-dot-errors");
  if (input < 0 || errors < 0 ||
      write(input, dot_text.data(), dot_text.size()) != static_cast<ssize_t>(dot_text.size())) {
    if (input >= 0) close(input);
    if (errors >= 0) close(errors);
    return make_error(ErrorKind::kIo, fmt::format("--svg {}: {}", svg_path, std::strerror(errno)));
  }
  lseek(input, 0, SEEK_SET);
  std::string output = "-o" + svg_path;
  std::vector<std::string> arguments = {dot, "-Tsvg", output};
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, errors, STDERR_FILENO);
  pid_t child = 0;
  const int spawned = posix_spawn(&child, dot.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (spawned == 0) {
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  std::string said = read_all(errors);
  close(input);
  close(errors);
  if (spawned != 0)
    return make_error(ErrorKind::kIo, fmt::format("--svg {}: cannot run {}: {}", svg_path, dot, std::strerror(spawned)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
    size_t newline = said.rfind('\n');
    std::string last = newline == std::string::npos ? said : said.substr(newline + 1);
    return make_error(ErrorKind::kIo, fmt::format("--svg {}: dot failed: {}", svg_path,
                                                  last.empty() ? "no message" : last));
  }
  return {};
}

}  // namespace hangpy::jobs
