#include "targets/thread_times.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "base/parse_number.h"
#include "targets/proc_file.h"

namespace hangpy::targets {
namespace {

// /proc/PID/task/TID/io: "rchar: N" and "wchar: N" lines among others.
std::optional<uint64_t> read_io_bytes(const std::string& path) {
  auto text = read_proc_file(path);
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  uint64_t total = 0;
  int found = 0;
  for (std::string key, value; lines >> key >> value;) {
    if (key != "rchar:" && key != "wchar:") continue;
    auto number = parse_decimal<uint64_t>(value);
    if (!number) return std::nullopt;
    total += *number;
    ++found;
  }
  return found == 2 ? std::optional<uint64_t>(total) : std::nullopt;
}

}  // namespace

std::map<int64_t, ThreadTime> read_thread_times(int pid) {
  static const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::map<int64_t, ThreadTime> times;
  const std::string task = fmt::format("/proc/{}/task", pid);
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(task, error)) {
    const std::string name = entry.path().filename().string();
    auto tid = parse_decimal<int64_t>(name);
    if (!tid) continue;
    // Fields after the command: [11] utime and [12] stime (fields 14 and 15), in clock ticks.
    auto fields = read_proc_stat(fmt::format("{}/{}/stat", task, name));
    if (!fields || fields->size() < 13) continue;
    auto user = parse_decimal<uint64_t>((*fields)[11]);
    auto system = parse_decimal<uint64_t>((*fields)[12]);
    if (!user || !system || ticks_per_second <= 0) continue;
    ThreadTime time;
    time.cpu_seconds = static_cast<double>(*user + *system) / ticks_per_second;
    time.io_bytes = read_io_bytes(fmt::format("{}/{}/io", task, name));
    time.state = (*fields)[0].empty() ? std::optional<char>() : (*fields)[0][0];
    // schedstat: "on-CPU ns, run-queue wait ns, timeslices" (CONFIG_SCHED_INFO).
    if (auto schedstat = read_proc_file(fmt::format("{}/{}/schedstat", task, name))) {
      std::istringstream words(*schedstat);
      std::string on_cpu, waited;
      if (words >> on_cpu >> waited)
        if (auto ns = parse_decimal<uint64_t>(waited)) time.run_delay_seconds = static_cast<double>(*ns) / 1e9;
    }
    times.emplace(*tid, time);
  }
  return times;
}

void add_thread_times(std::vector<cpython::NativeThread>& threads,
                      const std::map<int64_t, ThreadTime>& times) {
  for (cpython::NativeThread& thread : threads) {
    auto found = times.find(thread.lwp);
    if (found == times.end()) continue;
    thread.cpu_seconds = found->second.cpu_seconds;
    thread.io_bytes = found->second.io_bytes;
    thread.run_delay_seconds = found->second.run_delay_seconds;
    thread.run_state = found->second.state;
  }
}

double unix_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace hangpy::targets
