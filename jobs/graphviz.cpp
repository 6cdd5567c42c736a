#include "jobs/graphviz.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "base/anonymous_file.h"
#include "base/child_process.h"

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
  if (input < 0 || write(input, dot_text.data(), dot_text.size()) != static_cast<ssize_t>(dot_text.size())) {
    if (input >= 0) close(input);
    return make_error(ErrorKind::kIo, fmt::format("--svg {}: {}", svg_path, std::strerror(errno)));
  }
  lseek(input, 0, SEEK_SET);
  ChildCommand command({dot, "-Tsvg", "-o" + svg_path}, std::nullopt, true);
  command.program = dot;
  command.stdin_fd = input;
  command.stdout_to_null = true;
  // dot draws a triage's tree in well under a second; one that takes minutes is stuck.
  const ChildResult ran = run_child(command, std::chrono::minutes(5));
  close(input);
  if (!ran.started)
    return make_error(ErrorKind::kIo, fmt::format("--svg {}: cannot run {}", svg_path, ran.start_error));
  std::string said = ran.timed_out ? std::string("it ran past 5 minutes and was stopped") : ran.errors;
  const int status = ran.exit_code;
  if (status != 0 || ran.timed_out) {
    while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
    size_t newline = said.rfind('\n');
    std::string last = newline == std::string::npos ? said : said.substr(newline + 1);
    return make_error(ErrorKind::kIo, fmt::format("--svg {}: dot failed: {}", svg_path,
                                                  last.empty() ? "no message" : last));
  }
  return {};
}

}  // namespace hangpy::jobs
