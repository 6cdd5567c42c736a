#include "diagnosis/wait_graph.h"

#include <algorithm>

namespace hangpy::diagnosis {

std::vector<std::vector<size_t>> find_wait_cycles(const std::vector<std::optional<size_t>>& waits_for) {
  // Each node has at most one outgoing edge: follow it from every node not yet visited, colouring
  // the walk; meeting a node of the current walk closes a cycle. Linear in the number of threads.
  const size_t count = waits_for.size();
  constexpr size_t kUnvisited = static_cast<size_t>(-1);
  std::vector<size_t> walk_of(count, kUnvisited);
  std::vector<std::vector<size_t>> cycles;
  for (size_t start = 0; start < count; ++start) {
    if (walk_of[start] != kUnvisited) continue;
    std::vector<size_t> path;
    size_t node = start;
    while (true) {
      walk_of[node] = start;
      path.push_back(node);
      const std::optional<size_t>& next = waits_for[node];
      if (!next || *next >= count) break;
      if (walk_of[*next] == kUnvisited) {
        node = *next;
        continue;
      }
      if (walk_of[*next] == start) {  // closed a cycle on this walk
        auto first = std::find(path.begin(), path.end(), *next);
        std::vector<size_t> cycle(first, path.end());
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        cycles.push_back(std::move(cycle));
      }
      break;
    }
  }
  std::sort(cycles.begin(), cycles.end());
  return cycles;
}

}  // namespace hangpy::diagnosis
