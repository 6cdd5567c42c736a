#include "report/triage_text.h"

#include "base/printable.h"

#include <fmt/format.h>

#include "report/triage_view.h"
#include "triage/verdict.h"

namespace hangpy::report {
namespace {

void print_box(const triage::Triage& triage, const std::vector<TriageBox>& boxes, int index,
               const std::string& first_prefix, const std::string& rest_prefix, std::string& out) {
  const TriageBox& box = boxes[index];
  for (size_t k = 0; k < box.nodes.size(); ++k) {
    const triage::TreeNode& node = triage.nodes[box.nodes[k]];
    std::string line = (k == 0 ? first_prefix : rest_prefix + (box.children.empty() ? "  " : "│ "));
    if (node.frame < 0) {
      line += fmt::format("{} process{}", node.processes.size(), node.processes.size() == 1 ? "" : "es");
    } else {
      line += frame_label(triage.frames[node.frame]);
    }
    if (k == 0) line += fmt::format("  [{}]", node_label(triage, node));
    if (k == 0 && box.outlier) line += "  <- outlier";
    out += line + "\n";
  }
  for (size_t c = 0; c < box.children.size(); ++c) {
    const bool last = c + 1 == box.children.size();
    print_box(triage, boxes, box.children[c], rest_prefix + (last ? "└─ " : "├─ "),
              rest_prefix + (last ? "   " : "│  "), out);
  }
}

std::string thread_title(const triage::ThreadRecord& thread) {
  if (thread.asyncio_task)
    return thread.name ? fmt::format("asyncio task \"{}\"", *thread.name) : std::string("asyncio task");
  std::string title = "Thread";
  if (thread.name) title += fmt::format(" \"{}\"", *thread.name);
  if (thread.native_thread_id) title += fmt::format(" (LWP {})", *thread.native_thread_id);
  if (thread.main_thread) title += ", main thread";
  return title;
}

std::string frame_line(const triage::Frame& frame) {
  if (frame.kind == triage::Frame::Kind::kPython) {
    return fmt::format("File \"{}\", line {}, in {}{}", frame.file,
                       frame.line ? fmt::format("{}", *frame.line) : "?", frame.function,
                       frame.repeated ? fmt::format("\n    [Previous frame repeated {} more times]", frame.repeated) : "");
  }
  return frame.file.empty() ? frame.function : fmt::format("{} in {}", frame.function, frame.file);
}

}  // namespace

std::string format_triage_tree(const triage::Triage& triage) {
  std::string out;
  std::vector<TriageBox> boxes = triage_boxes(triage);
  if (!boxes.empty()) print_box(triage, boxes, 0, "", "", out);
  return out;
}

std::string format_triage_class(const triage::Triage& triage, int class_index) {
  const triage::EquivalenceClass& cls = triage.classes[class_index];
  const int representative = cls.processes.front();
  const triage::ProcessRecord& process = triage.processes[representative];
  std::string out = fmt::format("Group {} of {}{}: {}\n", class_index + 1, triage.classes.size(),
                                cls.outlier ? " (outlier)" : "", triage::describe_class(triage, class_index));
  out += fmt::format("  Representative: {}, from {}\n", triage::process_name(triage, representative),
                     process.source);
  for (const triage::FoldedStack& folded : triage.folded[representative]) {
    const triage::ThreadRecord& first = process.threads[folded.threads.front()];
    if (folded.count == 1) {
      out += "  " + thread_title(first) + "\n";
    } else {
      std::vector<std::string> names;
      for (size_t t : folded.threads) {
        if (names.size() == kMaxTextNames) {
          names.push_back(fmt::format("... ({} more)", folded.threads.size() - kMaxTextNames));
          break;
        }
        const triage::ThreadRecord& thread = process.threads[t];
        std::string name = thread.name ? fmt::format("\"{}\"", *thread.name)
                                       : std::string(thread.asyncio_task ? "task" : "thread");
        if (thread.native_thread_id) name += fmt::format(" (LWP {})", *thread.native_thread_id);
        names.push_back(name);
      }
      const bool all_tasks = folded.tasks == folded.count;
      out += fmt::format("  ×{} {} alike: {}\n", folded.count, all_tasks ? "asyncio tasks" : "threads",
                         fmt::join(names, ", "));
    }
    if (first.blocked_description)
      out += fmt::format("    {}: {}\n", first.asyncio_task ? "Awaiting" : "Blocked on", *first.blocked_description);
    const std::vector<triage::FrameId>& stack = triage.stacks[folded.stack];
    if (stack.empty()) out += "    (no frames)\n";
    for (triage::FrameId frame : stack) out += "    " + frame_line(triage.frames[frame]) + "\n";
    if (first.error) out += fmt::format("    <Python frames end here: {}>\n", *first.error);
  }
  return out;
}

namespace {
std::string format_triage_raw(const triage::Triage& triage);
}  // namespace

// Every name in it is a process's own (functions, files, threads, labels): the whole text is
// escaped for the terminal (it holds no colours).
std::string format_triage(const triage::Triage& triage) {
  return for_terminal(format_triage_raw(triage), true);
}

namespace {
std::string format_triage_raw(const triage::Triage& triage) {
  std::string out = triage.verdict.text + "\n";
  for (const std::string& note : triage.notes) out += "note: " + note + "\n";
  const int threads = triage.nodes.empty() ? 0 : triage.nodes[0].threads;
  const int tasks = triage.nodes.empty() ? 0 : triage.nodes[0].tasks;
  out += fmt::format("\nMerged {} stacks of {} process{} ({}, {} group{}):\n",
                     triage.native ? "native and Python" : "Python", triage.processes.size(),
                     triage.processes.size() == 1 ? "" : "es", count_threads_and_tasks(threads, tasks),
                     triage.classes.size(), triage.classes.size() == 1 ? "" : "s");
  out += format_triage_tree(triage);
  for (size_t c = 0; c < triage.classes.size(); ++c) out += "\n" + format_triage_class(triage, static_cast<int>(c));
  return out;
}
}  // namespace

}  // namespace hangpy::report
