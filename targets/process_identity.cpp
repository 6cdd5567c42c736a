#include "targets/process_identity.h"

#include <unistd.h>

#include <array>

#include <fmt/format.h>

#include "base/parse_number.h"
#include "base/printable.h"
#include "targets/proc_file.h"

namespace hangpy::targets {
namespace {

// The state letter and starttime of /proc/PID/stat (fields 3 and 22).
std::optional<std::pair<char, uint64_t>> state_and_start(int pid) {
  auto fields = read_proc_stat(fmt::format("/proc/{}/stat", pid));
  if (!fields || fields->size() < 20) return std::nullopt;
  const std::optional<uint64_t> start = parse_decimal<uint64_t>((*fields)[19]);
  if (!start) return std::nullopt;
  return std::pair{fields->front()[0], *start};
}

std::string executable_of(int pid) {
  std::array<char, 4096> buffer{};
  const ssize_t length = readlink(fmt::format("/proc/{}/exe", pid).c_str(), buffer.data(), buffer.size() - 1);
  return length > 0 ? std::string(buffer.data(), static_cast<size_t>(length)) : std::string();
}

std::string auxiliary_vector_of(int pid) {
  return read_proc_file(fmt::format("/proc/{}/auxv", pid)).value_or(std::string());
}

}  // namespace

std::optional<ProcessIdentity> process_identity(int pid) {
  auto found = state_and_start(pid);
  if (!found) return std::nullopt;
  return ProcessIdentity{found->second, executable_of(pid), auxiliary_vector_of(pid)};
}

std::optional<std::string> process_change(int pid, const std::optional<ProcessIdentity>& before) {
  if (!before) return std::nullopt;
  const auto now = state_and_start(pid);
  if (!now || now->first == 'Z' || now->first == 'X' || now->second != before->start_time)
    return fmt::format("process {} exited during the analysis", pid);
  const std::string executable = executable_of(pid);
  if (!before->executable.empty() && !executable.empty() && executable != before->executable)
    return fmt::format("process {} ran exec (now {}) during the analysis", pid, printable(executable, 300));
  const std::string auxiliary_vector = auxiliary_vector_of(pid);
  if (!before->auxiliary_vector.empty() && !auxiliary_vector.empty() &&
      auxiliary_vector != before->auxiliary_vector)
    return fmt::format("process {} ran exec ({} again) during the analysis", pid,
                       printable(executable.empty() ? before->executable : executable, 300));
  return std::nullopt;
}

}  // namespace hangpy::targets
