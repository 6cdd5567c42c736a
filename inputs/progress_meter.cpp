#include "inputs/progress_meter.h"

#include <unistd.h>

#include <fmt/format.h>

namespace hangpy::inputs {
namespace {

// Below this an input decompresses in well under a second: no bar.
constexpr uint64_t kBigInput = 64ull << 20;
constexpr auto kRedrawEvery = std::chrono::milliseconds(200);
constexpr int kBarWidth = 30;

}  // namespace

ProgressMeter::ProgressMeter(std::string what, uint64_t total)
    : what_(std::move(what)),
      total_(total),
      shown_(total >= kBigInput && isatty(STDERR_FILENO) != 0),
      last_(std::chrono::steady_clock::now()) {}

ProgressMeter::~ProgressMeter() {
  if (drawn_) fmt::print(stderr, "\r\033[K");
}

void ProgressMeter::update(uint64_t done, uint64_t produced) {
  if (!shown_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < kRedrawEvery) return;
  last_ = now;
  drawn_ = true;
  const double fraction = total_ > 0 ? std::min(1.0, static_cast<double>(done) / total_) : 0.0;
  const int filled = static_cast<int>(fraction * kBarWidth);
  fmt::print(stderr, "\r\033[Kcoreanalyze: {} [{:=<{}}{: <{}}] {:3.0f}% ({} MiB out)", what_, "",
             filled, "", kBarWidth - filled, fraction * 100, produced >> 20);
  std::fflush(stderr);
}

}  // namespace hangpy::inputs
