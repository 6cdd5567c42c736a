#include "report/triage_dot.h"

#include <fmt/format.h>

#include "report/triage_view.h"

namespace hangpy::report {
namespace {

// A DOT string literal's text: quotes and backslashes escaped, control characters dropped.
std::string dot_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

// Long chains (30 frames of a torch collective) keep their first and last frames.
constexpr size_t kMaxFramesInBox = 12;

std::string box_text(const triage::Triage& triage, const TriageBox& box) {
  std::vector<std::string> lines;
  for (int n : box.nodes) {
    const triage::TreeNode& node = triage.nodes[n];
    lines.push_back(node.frame < 0 ? fmt::format("{} processes", node.processes.size())
                                   : frame_label(triage.frames[node.frame]));
  }
  if (lines.size() > kMaxFramesInBox) {
    const size_t hidden = lines.size() - kMaxFramesInBox + 1;
    std::vector<std::string> kept(lines.begin(), lines.begin() + kMaxFramesInBox / 2);
    kept.push_back(fmt::format("... {} more frames ...", hidden));
    kept.insert(kept.end(), lines.end() - (kMaxFramesInBox - kMaxFramesInBox / 2 - 1), lines.end());
    lines = std::move(kept);
  }
  std::string text;
  for (const std::string& line : lines) text += dot_escaped(line) + "\\l";  // left-justified lines
  return text;
}

}  // namespace

std::string triage_dot(const triage::Triage& triage) {
  std::vector<TriageBox> boxes = triage_boxes(triage);
  std::string out = "digraph triage {\n";
  out += fmt::format("  label=\"{}\";\n  labelloc=t;\n", dot_escaped(triage.verdict.text));
  out += "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"monospace\", fontsize=10];\n";
  out += "  edge [fontname=\"sans-serif\", fontsize=9];\n";
  for (size_t b = 0; b < boxes.size(); ++b) {
    const TriageBox& box = boxes[b];
    const std::string colour = class_colour(box.class_index);
    out += fmt::format("  n{} [label=\"{}\", color=\"{}\"{}];\n", b, box_text(triage, box),
                       box.outlier ? kOutlierColour : colour,
                       box.outlier ? ", penwidth=3, fillcolor=\"#fde0dd\"" : ", penwidth=1.5");
  }
  for (size_t b = 1; b < boxes.size(); ++b) {
    const TriageBox& box = boxes[b];
    const triage::TreeNode& node = triage.nodes[box.nodes.front()];
    out += fmt::format("  n{} -> n{} [label=\"{}\", color=\"{}\", fontcolor=\"{}\"{}];\n", box.parent, b,
                       dot_escaped(node_label(triage, node)),
                       box.outlier ? kOutlierColour : class_colour(box.class_index),
                       box.outlier ? kOutlierColour : "#333333", box.outlier ? ", penwidth=3" : "");
  }
  out += "}\n";
  return out;
}

}  // namespace hangpy::report
