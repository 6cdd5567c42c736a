#include "report/triage_json.h"

#include "report/triage_view.h"
#include "triage/rank_set.h"
#include "triage/verdict.h"

namespace hangpy::report {
namespace {

template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json frame_json(const triage::Frame& frame) {
  nlohmann::json json = {{"kind", frame.kind == triage::Frame::Kind::kPython ? "python" : "native"},
                         {"function", frame.function},
                         {"file", frame.file},
                         {"line", optional_json(frame.line)}};
  if (frame.repeated > 0) json["repeated"] = frame.repeated;  // as the process's document folded it
  return json;
}

std::vector<int64_t> as_int64(const std::vector<int>& values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

nlohmann::json process_json(const triage::Triage& triage, int p) {
  const triage::ProcessRecord& process = triage.processes[p];
  size_t asyncio_tasks = 0;
  for (const triage::ThreadRecord& thread : process.threads) asyncio_tasks += thread.asyncio_task ? 1 : 0;
  const triage::ProcessLabels& labels = process.labels;
  return {{"index", p},
          {"name", triage::process_name(triage, p)},
          {"source", process.source},
          {"command", process.command},
          {"pid", optional_json(labels.pid)},
          {"ppid", optional_json(labels.ppid)},
          {"host", optional_json(labels.host)},
          {"rank", optional_json(triage::rank_of(labels))},
          {"local_rank", optional_json(labels.local_rank)},
          {"world_size", optional_json(labels.world_size)},
          {"slurm_procid", optional_json(labels.slurm_procid)},
          {"role", optional_json(labels.role)},
          {"group", triage.class_of[p]},
          {"threads", process.threads.size() - asyncio_tasks},
          {"asyncio_tasks", asyncio_tasks},
          {"deadlocks", process.deadlocks}};
}

nlohmann::json class_json(const triage::Triage& triage, int c) {
  const triage::EquivalenceClass& cls = triage.classes[c];
  const int representative = cls.processes.front();
  nlohmann::json stacks = nlohmann::json::array();
  for (const triage::FoldedStack& folded : triage.folded[representative]) {
    const triage::ThreadRecord& first = triage.processes[representative].threads[folded.threads.front()];
    nlohmann::json frames = nlohmann::json::array();
    for (triage::FrameId frame : triage.stacks[folded.stack]) frames.push_back(frame_json(triage.frames[frame]));
    nlohmann::json threads = nlohmann::json::array();
    for (size_t t : folded.threads) {
      if (threads.size() == kMaxJsonNames) break;
      const triage::ThreadRecord& thread = triage.processes[representative].threads[t];
      threads.push_back({{"name", optional_json(thread.name)},
                         {"native_thread_id", optional_json(thread.native_thread_id)},
                         {"main_thread", thread.main_thread},
                         {"asyncio_task", thread.asyncio_task}});
    }
    const size_t not_listed = folded.threads.size() - threads.size();
    stacks.push_back({{"count", folded.count},
                      {"asyncio_tasks", folded.tasks},
                      {"threads", std::move(threads)},
                      {"threads_not_listed", not_listed},
                      {"blocked_on", optional_json(first.blocked_description)},
                      {"blocked_kind", optional_json(first.blocked_kind)},
                      {"frames", std::move(frames)}});
  }
  triage::ClassPlace where = triage::class_place(triage, c);
  nlohmann::json place = nullptr;
  if (where.place) {
    place = {{"function", where.place->function},
             {"file", where.place->file},
             {"line", optional_json(where.place->line)}};
  }
  return {{"index", c},
          {"description", triage::describe_class(triage, c)},
          {"processes", triage::compact_ranges(as_int64(cls.processes))},
          {"members", triage::describe_processes(triage, cls.processes)},
          {"size", cls.processes.size()},
          {"role", optional_json(cls.role)},
          {"outlier", cls.outlier},
          {"colour", class_colour(c)},
          {"place", std::move(place)},
          {"blocked_on", optional_json(where.blocked_on)},
          {"representative", representative},
          {"stacks", std::move(stacks)}};
}

nlohmann::json box_json(const triage::Triage& triage, const std::vector<TriageBox>& boxes, int index) {
  const TriageBox& box = boxes[index];
  const triage::TreeNode& node = triage.nodes[box.nodes.front()];
  nlohmann::json frames = nlohmann::json::array();
  for (int n : box.nodes)
    if (triage.nodes[n].frame >= 0) frames.push_back(frame_json(triage.frames[triage.nodes[n].frame]));
  nlohmann::json children = nlohmann::json::array();
  for (int child : box.children) children.push_back(box_json(triage, boxes, child));
  return {{"frames", std::move(frames)},
          {"threads", node.threads - node.tasks},
          {"asyncio_tasks", node.tasks},
          {"process_count", node.processes.size()},
          {"processes", triage::compact_ranges(as_int64(node.processes))},
          {"label", node_label(triage, node)},
          {"group", box.class_index >= 0 ? nlohmann::json(box.class_index) : nlohmann::json(nullptr)},
          {"outlier", box.outlier},
          {"children", std::move(children)}};
}

}  // namespace

nlohmann::json triage_document(const triage::Triage& triage) {
  static constexpr const char* kKinds[] = {"nothing", "all_alike", "outliers", "no_majority"};
  nlohmann::json processes = nlohmann::json::array();
  for (size_t p = 0; p < triage.processes.size(); ++p) processes.push_back(process_json(triage, static_cast<int>(p)));
  nlohmann::json classes = nlohmann::json::array();
  for (size_t c = 0; c < triage.classes.size(); ++c) classes.push_back(class_json(triage, static_cast<int>(c)));
  std::vector<TriageBox> boxes = triage_boxes(triage);
  return {{"hangpy_version", HANGPY_VERSION},
          {"verdict", triage.verdict.text},
          {"verdict_kind", kKinds[static_cast<int>(triage.verdict.kind)]},
          {"absent_ranks", triage.verdict.absent_ranks},
          {"world_size", triage.verdict.world_size > 0 ? nlohmann::json(triage.verdict.world_size)
                                                       : nlohmann::json(nullptr)},
          {"native", triage.native},
          {"notes", triage.notes},
          {"processes", std::move(processes)},
          {"groups", std::move(classes)},
          {"tree", boxes.empty() ? nlohmann::json(nullptr) : box_json(triage, boxes, 0)}};
}

}  // namespace hangpy::report
