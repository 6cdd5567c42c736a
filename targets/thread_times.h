// The time axis of a live look: each thread's CPU time and the bytes it moved through system
// calls, as /proc counts them, so that two looks can tell a thread that runs (or reads and writes)
// in the same frames from one that sleeps there.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "cpython/target.h"

namespace hangpy::targets {

struct ThreadTime {
  double cpu_seconds = 0;           // utime + stime (task/TID/stat fields 14 and 15)
  std::optional<uint64_t> io_bytes;  // rchar + wchar (task/TID/io; absent when not readable)
  std::optional<double> run_delay_seconds;  // task/TID/schedstat's second field: run-queue wait
  std::optional<char> state;                // task/TID/stat's state letter
};

// Every thread of `pid` now, by thread id (a thread that ends while read is left out).
std::map<int64_t, ThreadTime> read_thread_times(int pid);

// `threads` with the times of those `times` holds.
void add_thread_times(std::vector<cpython::NativeThread>& threads,
                      const std::map<int64_t, ThreadTime>& times);

// Unix time now, in seconds.
double unix_time_now();

}  // namespace hangpy::targets
