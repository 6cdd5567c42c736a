#include "targets/blocked_threads.h"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "base/parse_number.h"
#include "targets/proc_file.h"

namespace hangpy::targets {
namespace {

// The one-letter state of /proc/PID/task/TID/stat.
std::optional<char> thread_state(int pid, int64_t lwp) {
  auto fields = read_proc_stat(fmt::format("/proc/{}/task/{}/stat", pid, lwp));
  if (!fields) return std::nullopt;
  return fields->front()[0];
}

// The first field of schedstat: nanoseconds on the CPU (absent without CONFIG_SCHED_INFO).
std::optional<uint64_t> run_nanoseconds(int pid, int64_t lwp) {
  auto text = read_proc_file(fmt::format("/proc/{}/task/{}/schedstat", pid, lwp));
  if (!text) return std::nullopt;
  return parse_decimal<uint64_t>(text->substr(0, text->find(' ')));
}

// voluntary_ctxt_switches + nonvoluntary_ctxt_switches of /proc/PID/task/TID/status: each time
// the thread left the CPU; one more when it woke, ran and slept again.
uint64_t context_switches(int pid, int64_t lwp) {
  auto text = read_proc_file(fmt::format("/proc/{}/task/{}/status", pid, lwp));
  if (!text) return 0;
  uint64_t total = 0;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("ctxt_switches:") == std::string::npos) continue;
    const size_t colon = line.find(':');
    std::string digits = line.substr(colon + 1);
    digits.erase(0, digits.find_first_not_of(" \t"));
    total += parse_decimal<uint64_t>(digits).value_or(0);
  }
  return total;
}

std::optional<std::string> syscall_line(int pid, int64_t lwp) {
  auto text = read_proc_file(fmt::format("/proc/{}/task/{}/syscall", pid, lwp));
  if (!text) return std::nullopt;
  while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) text->pop_back();
  return *text;
}

}  // namespace

cpython::NativeThread parse_syscall_line(const std::string& text, int64_t lwp) {
  cpython::NativeThread thread;
  thread.lwp = lwp;
  std::istringstream stream(text);
  long long number = -1;
  if (!(stream >> number)) return thread;
  std::vector<uint64_t> values;
  for (std::string word; stream >> word;) {
    const std::string_view digits = word.starts_with("0x") ? std::string_view(word).substr(2) : word;
    uint64_t value = 0;
    auto [stop, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
    if (digits.empty() || error != std::errc() || stop != digits.data() + digits.size()) return thread;
    values.push_back(value);
  }
  if (number >= 0 && values.size() == 8) {
    thread.syscall = number;
    std::copy_n(values.begin(), 6, thread.syscall_arguments.begin());
    thread.sp = values[6];
    thread.pc = values[7];
  } else if (values.size() == 2) {
    thread.sp = values[0];
    thread.pc = values[1];
  }
  return thread;
}

// Three /proc files a thread before, two after: this runs for every thread of the process, and a
// read of each file costs a few microseconds. Its state must be asleep (S, D): a thread stopped
// by a tracer (t) or a signal (T) is left to ptrace, which names the tracer when there is one.
// The syscall file tells a thread in the kernel (a call number, sp and pc) from one that runs or
// may run ("running"); its run time tells afterwards whether it ran meanwhile (context switches
// where the kernel keeps no schedstat).
std::optional<BlockedThread> blocked_in_syscall(int pid, int64_t lwp) {
  // The counter first: if the thread runs between this read and the syscall file, the file or
  // the check after the analysis sees it.
  BlockedThread blocked;
  blocked.run_nanoseconds = run_nanoseconds(pid, lwp);
  if (!blocked.run_nanoseconds) blocked.context_switches = context_switches(pid, lwp);
  const auto state = thread_state(pid, lwp);
  if (!state || (*state != 'S' && *state != 'D')) return std::nullopt;
  auto line = syscall_line(pid, lwp);
  if (!line) return std::nullopt;
  blocked.registers = parse_syscall_line(*line, lwp);
  if (blocked.registers.syscall < 0 || blocked.registers.sp == 0) return std::nullopt;
  blocked.syscall_line = std::move(*line);
  return blocked;
}

bool still_blocked(int pid, const BlockedThread& before) {
  // The syscall file first: "running" for a thread woken meanwhile, whether or not it ran yet.
  const auto line = syscall_line(pid, before.registers.lwp);
  if (!line || *line != before.syscall_line) return false;
  if (before.run_nanoseconds) return run_nanoseconds(pid, before.registers.lwp) == before.run_nanoseconds;
  return context_switches(pid, before.registers.lwp) == before.context_switches;
}

}  // namespace hangpy::targets
