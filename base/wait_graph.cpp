#include "base/wait_graph.h"

#include <algorithm>
#include <set>

namespace hangpy {
namespace {

// Depth-first from each start along waits-for edges, entering only nodes above the start, so
// that each cycle is found once, from its smallest node. Each node is entered once per start,
// which bounds the work by nodes × edges even where edges fan out (gathers).
class CycleSearch {
 public:
  explicit CycleSearch(const std::vector<std::vector<size_t>>& edges)
      : edges_(edges), on_path_(edges.size(), false), entered_(edges.size(), kNever) {}

  std::vector<std::vector<size_t>> run() {
    for (size_t start = 0; start < edges_.size() && found_.size() < kMaxCyclesReported; ++start) {
      start_ = start;
      visit(start);
    }
    return {found_.begin(), found_.end()};
  }

 private:
  static constexpr size_t kNever = static_cast<size_t>(-1);

  void visit(size_t node) {
    if (path_.size() >= kMaxCycleLength || found_.size() >= kMaxCyclesReported) return;
    if (entered_[node] == start_) return;
    entered_[node] = start_;
    path_.push_back(node);
    on_path_[node] = true;
    for (size_t next : edges_[node]) {
      if (next >= edges_.size()) continue;
      if (next == start_) {
        found_.insert(path_);  // starts at start_, its smallest node
      } else if (!on_path_[next] && next > start_) {
        visit(next);
      }
    }
    on_path_[node] = false;
    path_.pop_back();
  }

  const std::vector<std::vector<size_t>>& edges_;
  std::vector<bool> on_path_;
  std::vector<size_t> entered_;  // the start during whose search a node was last entered
  std::vector<size_t> path_;
  size_t start_ = 0;
  std::set<std::vector<size_t>> found_;
};

}  // namespace

std::vector<std::vector<size_t>> find_wait_cycles(const std::vector<std::vector<size_t>>& waits_for) {
  return CycleSearch(waits_for).run();
}

std::vector<std::vector<size_t>> find_wait_cycles(const std::vector<std::optional<size_t>>& waits_for) {
  std::vector<std::vector<size_t>> edges(waits_for.size());
  for (size_t i = 0; i < waits_for.size(); ++i)
    if (waits_for[i]) edges[i].push_back(*waits_for[i]);
  return find_wait_cycles(edges);
}

}  // namespace hangpy
