#include "report/triage_view.h"

#include <algorithm>

#include <fmt/format.h>

#include "triage/verdict.h"

namespace hangpy::report {
namespace {

int node_class(const triage::Triage& triage, const triage::TreeNode& node) {
  if (node.processes.empty()) return -1;
  const int first = triage.class_of[node.processes.front()];
  for (int p : node.processes)
    if (triage.class_of[p] != first) return -1;
  return first;
}

bool all_outliers(const triage::Triage& triage, const triage::TreeNode& node) {
  if (node.processes.empty()) return false;
  return std::all_of(node.processes.begin(), node.processes.end(),
                     [&](int p) { return triage.classes[triage.class_of[p]].outlier; });
}

void add_box(const triage::Triage& triage, std::vector<TriageBox>& boxes, int first_node, int parent) {
  TriageBox box;
  box.parent = parent;
  int node = first_node;
  box.nodes.push_back(node);
  // A chain goes on while one child carries every thread on.
  while (triage.nodes[node].children.size() == 1 && node != 0) {
    const int child = triage.nodes[node].children.front();
    if (triage.nodes[child].threads != triage.nodes[node].threads) break;
    node = child;
    box.nodes.push_back(node);
  }
  const triage::TreeNode& last = triage.nodes[node];
  box.class_index = node_class(triage, last);
  box.outlier = all_outliers(triage, last) &&
                (parent < 0 || !boxes[parent].outlier);
  const int index = static_cast<int>(boxes.size());
  boxes.push_back(std::move(box));
  if (parent >= 0) boxes[parent].children.push_back(index);
  std::vector<int> children = last.children;
  std::stable_sort(children.begin(), children.end(), [&](int a, int b) {
    return triage.nodes[a].processes.size() > triage.nodes[b].processes.size();
  });
  for (int child : children) add_box(triage, boxes, child, index);
}

}  // namespace

std::vector<TriageBox> triage_boxes(const triage::Triage& triage) {
  std::vector<TriageBox> boxes;
  if (triage.nodes.empty()) return boxes;
  add_box(triage, boxes, 0, -1);
  return boxes;
}

std::string frame_label(const triage::Frame& frame) {
  if (frame.kind == triage::Frame::Kind::kPython) {
    return fmt::format("`{}` at {}:{}{}", frame.function, triage::base_name(frame.file),
                       frame.line ? fmt::format("{}", *frame.line) : "?",
                       frame.repeated ? fmt::format(" [repeated {} more times]", frame.repeated) : "");
  }
  if (frame.file.empty()) return fmt::format("`{}`", frame.function);
  return fmt::format("`{}` in {}", frame.function, triage::base_name(frame.file));
}

std::string count_threads_and_tasks(int threads_and_tasks, int tasks) {
  const int threads = threads_and_tasks - tasks;
  std::vector<std::string> parts;
  if (threads > 0 || tasks == 0) parts.push_back(fmt::format("{} thread{}", threads, threads == 1 ? "" : "s"));
  if (tasks > 0) parts.push_back(fmt::format("{} asyncio task{}", tasks, tasks == 1 ? "" : "s"));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string node_label(const triage::Triage& triage, const triage::TreeNode& node) {
  return fmt::format("{}: {}", count_threads_and_tasks(node.threads, node.tasks),
                     triage::describe_processes(triage, node.processes));
}

std::string class_colour(int class_index) {
  // Tableau 10 without its red, which marks outliers.
  static constexpr const char* kPalette[] = {"#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                                             "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
  if (class_index < 0) return kSharedColour;
  return kPalette[class_index % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

}  // namespace hangpy::report
