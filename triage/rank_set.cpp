#include "triage/rank_set.h"

#include <algorithm>

#include <fmt/format.h>

namespace hangpy::triage {

std::string compact_ranges(std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::string text;
  for (size_t start = 0; start < values.size();) {
    size_t end = start;
    while (end + 1 < values.size() && values[end + 1] == values[end] + 1) ++end;
    if (!text.empty()) text += ',';
    text += end == start ? fmt::format("{}", values[start])
                         : fmt::format("{}-{}", values[start], values[end]);
    start = end + 1;
  }
  return text;
}

}  // namespace hangpy::triage
