#include "report/repeated_frames.h"

#include <fmt/format.h>

namespace hangpy::report {
namespace {

bool same_place(const nlohmann::json& a, const nlohmann::json& b) {
  for (const char* key : {"file", "line", "function", "qualname"}) {
    auto x = a.find(key), y = b.find(key);
    if ((x == a.end()) != (y == b.end())) return false;
    if (x != a.end() && *x != *y) return false;
  }
  return true;
}

}  // namespace

std::string repeated_frames_line(size_t more) {
  return fmt::format("  [Previous frame repeated {} more time{}]\n", more, more == 1 ? "" : "s");
}

void fold_repeated_frames(nlohmann::json& document) {
  auto threads = document.find("threads");
  if (threads == document.end() || !threads->is_array()) return;
  for (nlohmann::json& thread : *threads) {
    auto frames = thread.find("frames");
    if (frames == thread.end() || !frames->is_array() || frames->size() <= kRepeatsShown) continue;
    nlohmann::json kept = nlohmann::json::array();
    size_t run = 0;  // identical frames so far, the current one included
    for (nlohmann::json& frame : *frames) {
      if (frame.is_null() && !kept.empty()) {  // left out by process_document: a repeat
        nlohmann::json& last = kept.back();
        last["repeated"] = last.value("repeated", 0) + 1;
        continue;
      }
      run = !kept.empty() && same_place(frame, kept.back()) ? run + 1 : 1;
      if (run <= kRepeatsShown) {
        kept.push_back(std::move(frame));
      } else {
        nlohmann::json& last = kept.back();
        last["repeated"] = last.value("repeated", 0) + 1;
      }
    }
    *frames = std::move(kept);
  }
}

}  // namespace hangpy::report
