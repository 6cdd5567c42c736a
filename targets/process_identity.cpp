#include "targets/process_identity.h"

#include <unistd.h>

#include <array>
#include <sstream>

#include <fmt/format.h>

#include "base/printable.h"
#include "targets/proc_file.h"

namespace hangpy::coreanalyze {
namespace {

// The state letter and starttime of /proc/PID/stat (fields 3 and 22), after the command, which
// may hold spaces and parentheses.
std::optional<std::pair<char, uint64_t>> state_and_start(int pid) {
  auto stat = read_proc_file(fmt::format("/proc/{}/stat", pid));
  if (!stat) return std::nullopt;
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat->substr(close + 1));
  std::string field;
  char state = '?';
  uint64_t start = 0;
  for (int number = 3; number <= 22 && fields >> field; ++number) {
    if (number == 3) state = field.empty() ? '?' : field[0];
    if (number == 22) start = std::stoull(field);
  }
  return std::pair{state, start};
}

std::string executable_of(int pid) {
  std::array<char, 4096> buffer{};
  const ssize_t length = readlink(fmt::format("/proc/{}/exe", pid).c_str(), buffer.data(), buffer.size() - 1);
  return length > 0 ? std::string(buffer.data(), static_cast<size_t>(length)) : std::string();
}

}  // namespace

std::optional<ProcessIdentity> process_identity(int pid) {
  auto found = state_and_start(pid);
  if (!found) return std::nullopt;
  return ProcessIdentity{found->second, executable_of(pid)};
}

std::optional<std::string> process_change(int pid, const std::optional<ProcessIdentity>& before) {
  if (!before) return std::nullopt;
  const auto now = state_and_start(pid);
  if (!now || now->first == 'Z' || now->first == 'X' || now->second != before->start_time)
    return fmt::format("process {} exited during the analysis", pid);
  const std::string executable = executable_of(pid);
  if (!before->executable.empty() && !executable.empty() && executable != before->executable)
    return fmt::format("process {} ran exec (now {}) during the analysis", pid, printable(executable, 300));
  return std::nullopt;
}

}  // namespace hangpy::coreanalyze
