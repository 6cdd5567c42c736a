#include "base/child_process.h"

#include "base/anonymous_file.h"

#include <climits>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

extern char** environ;

namespace hangpy {
namespace {

using Clock = std::chrono::steady_clock;

// A captured stream is an anonymous file rather than a pipe: nothing has to drain it while
// several children run, and a child that writes much cannot block on a full pipe.
struct Running {
  pid_t pid = -1;
  int out = -1;
  int err = -1;
  Clock::time_point started;
};

std::string read_all(int& file) {
  std::string text;
  if (file < 0) return text;
  lseek(file, 0, SEEK_SET);
  char buffer[65536];
  for (ssize_t got; (got = read(file, buffer, sizeof buffer)) != 0;) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buffer, static_cast<size_t>(got));
  }
  close(file);
  file = -1;
  return text;
}

Running start(const ChildCommand& command, ChildResult& result) {
  Running running;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (command.stdin_path)
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, command.stdin_path->c_str(), O_RDONLY, 0);
  else if (command.stdin_fd >= 0)
    posix_spawn_file_actions_adddup2(&actions, command.stdin_fd, STDIN_FILENO);
  if (command.stdout_path) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, command.stdout_path->c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);  // a capture: its owner shares it
  } else if (command.stdout_to_null) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  } else if (command.capture) {
    running.out = anonymous_file("coreanalyze-child-stdout");
    if (running.out >= 0) posix_spawn_file_actions_adddup2(&actions, running.out, STDOUT_FILENO);
  }
  if (command.capture) {
    running.err = anonymous_file("coreanalyze-child-stderr");
    if (running.err >= 0) posix_spawn_file_actions_adddup2(&actions, running.err, STDERR_FILENO);
  }
  // Children get their own process group, so that a time limit kills what they started too
  // (srun's and pdsh's helpers, gcore's gdb).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> argv;
  for (const std::string& argument : command.argv) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  running.started = Clock::now();
  const int failed = command.program.empty()
                         ? posix_spawnp(&running.pid, argv[0], &actions, &attributes, argv.data(), environ)
                         : posix_spawn(&running.pid, command.program.c_str(), &actions, &attributes, argv.data(),
                                       environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (failed != 0) {
    result.start_error = (command.program.empty() ? command.argv[0] : command.program) + ": " + std::strerror(failed);
    running.pid = -1;
    if (running.out >= 0) close(running.out);
    if (running.err >= 0) close(running.err);
    running.out = running.err = -1;
  } else {
    result.started = true;
  }
  return running;
}

void finish(Running& running, int status, ChildResult& result) {
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
                     : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  result.seconds = std::chrono::duration<double>(Clock::now() - running.started).count();
  result.output = read_all(running.out);
  result.errors = read_all(running.err);
  running.pid = -1;
}

}  // namespace

std::vector<ChildResult> run_children(const std::vector<ChildCommand>& commands, int parallel,
                                      std::chrono::milliseconds time_limit) {
  std::vector<ChildResult> results(commands.size());
  std::vector<Running> running(commands.size());
  size_t next = 0;
  size_t active = 0;
  const size_t most = static_cast<size_t>(std::max(parallel, 1));
  while (next < commands.size() || active > 0) {
    while (active < most && next < commands.size()) {
      running[next] = start(commands[next], results[next]);
      if (running[next].pid > 0) ++active;
      ++next;
    }
    bool reaped = false;
    for (size_t i = 0; i < next; ++i) {
      Running& child = running[i];
      if (child.pid <= 0) continue;
      int status = 0;
      const pid_t done = waitpid(child.pid, &status, WNOHANG);
      if (done == child.pid || (done < 0 && errno == ECHILD)) {
        finish(child, status, results[i]);
        --active;
        reaped = true;
      } else if (Clock::now() - child.started > time_limit && !results[i].timed_out) {
        results[i].timed_out = true;
        kill(-child.pid, SIGKILL);
      }
    }
    if (!reaped && active > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return results;
}

ChildResult run_child(const ChildCommand& command, std::chrono::milliseconds time_limit) {
  return run_children({command}, 1, time_limit).front();
}

std::string this_program() {
  char path[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  return length > 0 ? std::string(path, static_cast<size_t>(length)) : "coreanalyze";
}

}  // namespace hangpy
