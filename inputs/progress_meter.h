// A one-line progress bar on stderr for work on a big input (decompressing a core of GBs), shown
// only when stderr is a terminal and the input is big enough to make a user wait.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace hangpy::inputs {

class ProgressMeter {
 public:
  // `what`: "decompressing core.zst"; `total`: the input's size in bytes (0 when unknown).
  ProgressMeter(std::string what, uint64_t total);
  ~ProgressMeter();  // clears the line
  // `done` input bytes of `total` handled, `produced` output bytes written so far.
  void update(uint64_t done, uint64_t produced);

 private:
  std::string what_;
  uint64_t total_;
  bool shown_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace hangpy::inputs
