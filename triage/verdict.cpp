#include "triage/verdict.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "triage/rank_set.h"

namespace hangpy::triage {
namespace {

// More classes than this in the verdict make a paragraph, not a line; the rest are listed below it.
constexpr size_t kMaxClassesInVerdict = 6;

// A class's processes with the same role, the class included.
std::vector<int> classes_of_role(const Triage& triage, const std::optional<std::string>& role) {
  std::vector<int> classes;
  for (size_t c = 0; c < triage.classes.size(); ++c)
    if (triage.classes[c].role == role) classes.push_back(static_cast<int>(c));
  return classes;
}

size_t processes_of_role(const Triage& triage, const std::optional<std::string>& role) {
  size_t count = 0;
  for (int c : classes_of_role(triage, role)) count += triage.classes[c].processes.size();
  return count;
}

const FoldedStack* folded_stack(const Triage& triage, int process, StackId stack) {
  for (const FoldedStack& folded : triage.folded[process])
    if (folded.stack == stack) return &folded;
  return nullptr;
}

bool run_by_main_thread(const Triage& triage, int process, StackId stack) {
  const FoldedStack* folded = folded_stack(triage, process, stack);
  if (folded == nullptr) return false;
  for (size_t thread : folded->threads)
    if (triage.processes[process].threads[thread].main_thread) return true;
  return false;
}

// Every member's first thread on `stack`: one description when all say the same, else the kind
// of wait when all share it. "unknown" says nothing.
std::optional<std::string> shared_blocked_on(const Triage& triage, const EquivalenceClass& cls,
                                             StackId stack) {
  std::set<std::string> descriptions, kinds;
  for (int p : cls.processes) {
    const FoldedStack* folded = folded_stack(triage, p, stack);
    if (folded == nullptr || folded->threads.empty()) continue;
    const ThreadRecord& thread = triage.processes[p].threads[folded->threads.front()];
    descriptions.insert(thread.blocked_description.value_or(""));
    kinds.insert(thread.blocked_kind.value_or(""));
  }
  if (kinds.size() != 1 || kinds.begin()->empty() || *kinds.begin() == "unknown") return std::nullopt;
  if (descriptions.size() == 1 && !descriptions.begin()->empty()) return *descriptions.begin();
  return *kinds.begin();
}

}  // namespace

std::string process_name(const Triage& triage, int process) {
  const ProcessLabels& labels = triage.processes[process].labels;
  std::optional<int64_t> rank = rank_of(labels);
  std::string name = rank ? fmt::format("rank {}", *rank) : fmt::format("process {}", process);
  std::vector<std::string> details;
  if (labels.pid) details.push_back(fmt::format("PID {}", *labels.pid));
  if (labels.host) details.push_back(fmt::format("on {}", *labels.host));
  if (!details.empty()) name += fmt::format(" ({})", fmt::join(details, " "));
  return name;
}

std::string describe_processes(const Triage& triage, const std::vector<int>& members) {
  if (members.size() == 1) return process_name(triage, members.front());
  std::vector<int64_t> ranks, positions;
  for (int p : members) {
    if (auto rank = rank_of(triage.processes[p].labels)) ranks.push_back(*rank);
    else positions.push_back(p);
  }
  std::vector<std::string> parts;
  if (!ranks.empty()) {
    std::string set = compact_ranges(ranks);
    parts.push_back(fmt::format("{} {}", set.find_first_of(",-") == std::string::npos ? "rank" : "ranks", set));
  }
  if (!positions.empty()) {
    std::string set = compact_ranges(positions);
    parts.push_back(fmt::format("{} {}", set.find_first_of(",-") == std::string::npos ? "process" : "processes", set));
  }
  return fmt::format("{}", fmt::join(parts, " and "));
}

ClassPlace class_place(const Triage& triage, int class_index) {
  const EquivalenceClass& cls = triage.classes[class_index];
  // The stacks every other class of the role has: they do not tell this class apart.
  std::optional<std::set<StackId>> shared;
  for (int other : classes_of_role(triage, cls.role)) {
    if (other == class_index) continue;
    std::set<StackId> stacks(triage.classes[other].stacks.begin(), triage.classes[other].stacks.end());
    if (!shared) {
      shared = std::move(stacks);
    } else {
      std::set<StackId> both;
      std::set_intersection(shared->begin(), shared->end(), stacks.begin(), stacks.end(),
                            std::inserter(both, both.end()));
      shared = std::move(both);
    }
  }
  std::vector<StackId> candidates;
  for (StackId stack : cls.stacks)
    if (!shared || !shared->contains(stack)) candidates.push_back(stack);
  if (candidates.empty()) candidates = cls.stacks;
  if (candidates.empty()) return {};
  const int representative = cls.processes.front();
  auto first_thread = [&](StackId stack) -> const ThreadRecord* {
    const FoldedStack* folded = folded_stack(triage, representative, stack);
    if (folded == nullptr || folded->threads.empty()) return nullptr;
    return &triage.processes[representative].threads[folded->threads.front()];
  };
  // An asyncio program's main thread idles in its event loop (a "select" wait: the selector's
  // select() or the loop's _run_once) while the tasks are what hangs: then a task's stack says
  // more than the loop's.
  const bool has_tasks = std::any_of(candidates.begin(), candidates.end(), [&](StackId stack) {
    const ThreadRecord* thread = first_thread(stack);
    return thread != nullptr && thread->asyncio_task;
  });
  // The main thread's stack first (not an idle event loop's when there are tasks), then one that
  // says what it waits for, then the deepest.
  auto score = [&](StackId stack) {
    const ThreadRecord* thread = first_thread(stack);
    const bool idle_loop = has_tasks && thread != nullptr && thread->blocked_kind == "select";
    const bool blocked = thread != nullptr && thread->blocked_kind.has_value() && !idle_loop;
    return std::make_tuple(run_by_main_thread(triage, representative, stack) && !idle_loop,
                           blocked, triage.stacks[stack].size());
  };
  StackId best = *std::max_element(candidates.begin(), candidates.end(),
                                   [&](StackId a, StackId b) { return score(a) < score(b); });
  std::vector<Frame> frames;
  for (FrameId frame : triage.stacks[best]) frames.push_back(triage.frames[frame]);
  const FoldedStack* folded = folded_stack(triage, representative, best);
  const bool task = folded != nullptr && !folded->threads.empty() &&
                    triage.processes[representative].threads[folded->threads.front()].asyncio_task;
  return {best, place_of(frames), shared_blocked_on(triage, cls, best), task};
}

std::string describe_class(const Triage& triage, int class_index, bool with_fraction) {
  const EquivalenceClass& cls = triage.classes[class_index];
  std::string text = describe_processes(triage, cls.processes);
  if (with_fraction && cls.processes.size() > 1)
    text += fmt::format(" ({}/{})", cls.processes.size(), processes_of_role(triage, cls.role));
  if (!is_plain_role(cls.role)) text += fmt::format(" [{}]", *cls.role);
  ClassPlace where = class_place(triage, class_index);
  text += where.place ? " in " + format_place(*where.place) : " with no Python stack";
  if (where.blocked_on)
    text += fmt::format(" ({}: {})", where.asyncio_task ? "asyncio task awaiting" : "blocked on",
                        *where.blocked_on);
  // A deadlock inside the processes explains the hang better than any one stack does.
  const bool all_deadlocked = std::all_of(cls.processes.begin(), cls.processes.end(), [&](int p) {
    return !triage.processes[p].deadlocks.empty();
  });
  if (all_deadlocked) {
    text += cls.processes.size() == 1 ? fmt::format("; {}", triage.processes[cls.processes.front()].deadlocks.front())
                                      : std::string(", a deadlock in each");
  }
  return text;
}

Verdict decide_verdict(Triage& triage) {
  Verdict verdict;
  if (triage.processes.empty()) {
    verdict.text = "no process to triage";
    return verdict;
  }
  // Roles in the order of their size, largest first; ties by first appearance.
  std::vector<std::optional<std::string>> roles;
  for (const EquivalenceClass& cls : triage.classes)
    if (std::find(roles.begin(), roles.end(), cls.role) == roles.end()) roles.push_back(cls.role);
  std::stable_sort(roles.begin(), roles.end(), [&](const auto& a, const auto& b) {
    return processes_of_role(triage, a) > processes_of_role(triage, b);
  });
  std::vector<std::string> parts;
  size_t classes_left_out = 0;
  for (size_t r = 0; r < roles.size(); ++r) {
    std::vector<int> classes = classes_of_role(triage, roles[r]);  // largest first
    const size_t total = processes_of_role(triage, roles[r]);
    Verdict::Kind kind;
    if (classes.size() == 1) {
      kind = Verdict::Kind::kAllAlike;
    } else if (triage.classes[classes[0]].processes.size() > triage.classes[classes[1]].processes.size()) {
      kind = Verdict::Kind::kOutliers;
      for (size_t k = 1; k < classes.size(); ++k) triage.classes[classes[k]].outlier = true;
    } else {
      kind = Verdict::Kind::kNoMajority;
    }
    if (r == 0) verdict.kind = kind;
    std::string prefix;
    if (kind == Verdict::Kind::kAllAlike && total > 1)
      prefix = fmt::format("all {} {}alike: ", total, is_plain_role(roles[r]) ? "processes " : "");
    if (kind == Verdict::Kind::kNoMajority)
      prefix = fmt::format("no single outlier ({} groups, none larger): ", classes.size());
    for (size_t k = 0; k < classes.size(); ++k) {
      if (parts.size() >= kMaxClassesInVerdict) {
        classes_left_out++;
        continue;
      }
      parts.push_back((k == 0 ? prefix : "") +
                      describe_class(triage, classes[k], kind != Verdict::Kind::kAllAlike));
    }
  }
  verdict.text = fmt::format("{}", fmt::join(parts, "; "));
  if (classes_left_out > 0)
    verdict.text += fmt::format("; and {} more group{}", classes_left_out, classes_left_out == 1 ? "" : "s");
  return verdict;
}

}  // namespace hangpy::triage
