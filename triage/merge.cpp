#include "triage/merge.h"
#include "triage/pipe_partners.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "triage/verdict.h"

namespace hangpy::triage {
namespace {

struct FrameHash {
  size_t operator()(const Frame& frame) const {
    size_t hash = std::hash<std::string>()(frame.function);
    hash = hash * 31 + std::hash<std::string>()(frame.file);
    hash = hash * 31 + static_cast<size_t>(frame.line.value_or(-1));
    return hash * 2 + (frame.kind == Frame::Kind::kNative ? 1 : 0);
  }
};

struct StackHash {
  size_t operator()(const std::vector<FrameId>& stack) const {
    size_t hash = stack.size();
    for (FrameId frame : stack) hash = hash * 1000003 + static_cast<size_t>(frame);
    return hash;
  }
};

bool has_native_stacks(const ProcessRecord& process) {
  bool any_python = false;
  for (const ThreadRecord& thread : process.threads) {
    if (thread.python_frames.empty() || thread.asyncio_task) continue;  // a task has no native stack
    any_python = true;
    if (!thread.native_frames) return false;
  }
  return any_python;
}

class Interner {
 public:
  explicit Interner(Triage& triage) : triage_(triage) {}

  StackId stack_of(const std::vector<Frame>& frames) {
    std::vector<FrameId> ids;
    ids.reserve(frames.size());
    for (const Frame& frame : frames) ids.push_back(frame_id(frame));
    auto [found, inserted] = stack_ids_.try_emplace(ids, static_cast<StackId>(triage_.stacks.size()));
    if (inserted) triage_.stacks.push_back(std::move(ids));
    return found->second;
  }

 private:
  FrameId frame_id(const Frame& frame) {
    auto [found, inserted] = frame_ids_.try_emplace(frame, static_cast<FrameId>(triage_.frames.size()));
    if (inserted) triage_.frames.push_back(frame);
    return found->second;
  }

  Triage& triage_;
  std::unordered_map<Frame, FrameId, FrameHash> frame_ids_;
  std::unordered_map<std::vector<FrameId>, StackId, StackHash> stack_ids_;
};

std::vector<FoldedStack> fold_threads(const ProcessRecord& process, bool native, Interner& interner) {
  std::vector<FoldedStack> folded;
  std::unordered_map<StackId, size_t> position;
  for (size_t i = 0; i < process.threads.size(); ++i) {
    const ThreadRecord& thread = process.threads[i];
    // Native-only threads (--native-all) have no place in a Python-only merge.
    if (!native && thread.python_frames.empty() && thread.native_frames) continue;
    StackId stack = interner.stack_of(stack_frames(thread, native));
    auto [at, inserted] = position.try_emplace(stack, folded.size());
    if (inserted) folded.push_back({stack, 0, 0, {}});
    folded[at->second].count++;
    if (thread.asyncio_task) folded[at->second].tasks++;
    folded[at->second].threads.push_back(i);
  }
  return folded;
}

int child_with_frame(std::vector<TreeNode>& nodes, int parent, FrameId frame) {
  for (int child : nodes[parent].children)
    if (nodes[child].frame == frame) return child;
  TreeNode node;
  node.frame = frame;
  node.parent = parent;
  nodes.push_back(std::move(node));
  const int index = static_cast<int>(nodes.size()) - 1;
  nodes[parent].children.push_back(index);
  return index;
}

void add_to_node(TreeNode& node, int process, int count, int tasks) {
  node.threads += count;
  node.tasks += tasks;
  if (node.processes.empty() || node.processes.back() != process) node.processes.push_back(process);
}

void build_tree(Triage& triage) {
  triage.nodes.assign(1, TreeNode{});
  for (size_t p = 0; p < triage.folded.size(); ++p) {
    for (const FoldedStack& folded : triage.folded[p]) {
      int node = 0;
      add_to_node(triage.nodes[0], static_cast<int>(p), folded.count, folded.tasks);
      for (FrameId frame : triage.stacks[folded.stack]) {
        node = child_with_frame(triage.nodes, node, frame);
        add_to_node(triage.nodes[node], static_cast<int>(p), folded.count, folded.tasks);
      }
    }
  }
}

void classify(Triage& triage) {
  // A class is a role and a set of distinct stacks; how many threads run each does not matter
  // (a thread pool of 4 or of 5 waiting for work is the same state).
  std::map<std::pair<std::string, std::vector<StackId>>, size_t> class_index;
  std::vector<EquivalenceClass> classes;
  std::vector<size_t> class_of(triage.processes.size());
  for (size_t p = 0; p < triage.processes.size(); ++p) {
    std::vector<StackId> stacks;
    for (const FoldedStack& folded : triage.folded[p]) stacks.push_back(folded.stack);
    std::sort(stacks.begin(), stacks.end());
    const std::optional<std::string>& role = triage.processes[p].labels.role;
    auto [found, inserted] = class_index.try_emplace({role.value_or(""), stacks}, classes.size());
    if (inserted) classes.push_back({{}, stacks, role, false});
    classes[found->second].processes.push_back(static_cast<int>(p));
    class_of[p] = found->second;
  }
  std::vector<size_t> order(classes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return classes[a].processes.size() > classes[b].processes.size();
  });
  std::vector<int> new_index(classes.size());
  for (size_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = static_cast<int>(i);
    triage.classes.push_back(std::move(classes[order[i]]));
  }
  triage.class_of.resize(triage.processes.size());
  for (size_t p = 0; p < class_of.size(); ++p) triage.class_of[p] = new_index[class_of[p]];
}

// A plain process forked by another plain process of the inputs (a pre-fork server's workers
// under their arbiter, a script's os.fork children) is its "child": the parent and its children
// do different work, and an arbiter must not be taken for the odd worker. A rank's children keep
// their own roles (DataLoader worker...), told from their stacks.
void mark_children(Triage& triage) {
  std::set<std::pair<std::string, int64_t>> plain_parents;
  for (const ProcessRecord& process : triage.processes)
    if (process.labels.pid && process.labels.role == "process")
      plain_parents.insert({process.labels.host.value_or(""), *process.labels.pid});
  for (ProcessRecord& process : triage.processes) {
    if (process.labels.role != "process" || !process.labels.ppid) continue;
    if (plain_parents.count({process.labels.host.value_or(""), *process.labels.ppid}))
      process.labels.role = "child";
  }
}

}  // namespace

const std::vector<Frame>& stack_frames(const ThreadRecord& thread, bool native) {
  if (native && thread.native_frames) return *thread.native_frames;
  return thread.python_frames;
}

namespace {

// The same process given twice (its core and its --pid, or two collections of one node) is one
// process: a second copy would make a group of it. Kept: the first, by host and PID.
std::vector<ProcessRecord> drop_repeats(std::vector<ProcessRecord> processes, std::vector<std::string>& notes) {
  // In place: a second vector of 100,000 records would hold another copy of each one's fixed part.
  std::set<std::pair<std::string, int64_t>> seen;
  auto given_again = [&](const ProcessRecord& process) {
    if (!process.labels.pid) return false;
    const std::pair<std::string, int64_t> key{process.labels.host.value_or(""), *process.labels.pid};
    if (seen.insert(key).second) return false;
    notes.push_back(fmt::format("PID {}{} given again ({}): counted once", *process.labels.pid,
                                process.labels.host ? " on " + *process.labels.host : "", process.source));
    return true;
  };
  processes.erase(std::remove_if(processes.begin(), processes.end(), given_again), processes.end());
  return processes;
}

// A child waiting for an import whose module lock records as its owner a thread of the parent
// (the same ident: the child's memory is the parent's copy): that thread was importing the
// module when the parent forked, and did not come along.
bool name_inherited_import(ThreadRecord& waiter, const ProcessRecord& parent, int64_t parent_pid) {
  constexpr std::string_view kImport = "the import of ";
  constexpr std::string_view kForked = " (held when the process forked";
  if (!waiter.holder_gone || !waiter.owner_ident || !waiter.blocked_description ||
      !waiter.blocked_description->starts_with(kImport))
    return false;
  const size_t end = waiter.blocked_description->find(kForked);
  if (end == std::string::npos) return false;
  for (const ThreadRecord& holder : parent.threads) {
    if (holder.thread_id != waiter.owner_ident) continue;
    const std::string who = holder.name ? fmt::format("thread \"{}\"", *holder.name) : std::string("a thread");
    waiter.blocked_description = fmt::format("{}, which {} of parent PID {} was importing at fork (fork before threads "
                                             "start, or use spawn)",
                                             waiter.blocked_description->substr(0, end), who, parent_pid);
    return true;
  }
  return false;
}

// A child waiting for a lock no thread of its own holds, whose parent is among the inputs with a
// thread holding that very lock (same address: the child's memory is a copy of the parent's):
// the lock was held when the parent forked, and the holder did not come along.
void name_inherited_locks(std::vector<ProcessRecord>& processes) {
  std::map<std::pair<std::string, int64_t>, const ProcessRecord*> by_pid;
  for (const ProcessRecord& process : processes)
    if (process.labels.pid) by_pid[{process.labels.host.value_or(""), *process.labels.pid}] = &process;
  for (ProcessRecord& child : processes) {
    if (!child.labels.ppid) continue;
    auto parent = by_pid.find({child.labels.host.value_or(""), *child.labels.ppid});
    if (parent == by_pid.end()) continue;
    for (ThreadRecord& waiter : child.threads) {
      if (name_inherited_import(waiter, *parent->second, *child.labels.ppid)) continue;
      if (!waiter.holder_gone || !waiter.blocked_object) continue;
      for (const ThreadRecord& holder : parent->second->threads) {
        if (std::find(holder.held_locks.begin(), holder.held_locks.end(), *waiter.blocked_object) ==
            holder.held_locks.end())
          continue;
        const std::string who = holder.name ? fmt::format("thread \"{}\"", *holder.name) : std::string("a thread");
        waiter.blocked_description = fmt::format(
            "{} that {} of parent PID {} held at fork (fork before threads start, or use spawn)",
            waiter.blocked_kind == "rlock" ? "an RLock" : "a Lock", who, *child.labels.ppid);
        break;
      }
    }
  }
}

}  // namespace

Triage merge(std::vector<ProcessRecord> processes) {
  Triage triage;
  triage.processes = drop_repeats(std::move(processes), triage.notes);
  name_inherited_locks(triage.processes);
  match_pipe_ends(triage.processes);
  size_t with_native = 0, with_python = 0;
  for (const ProcessRecord& process : triage.processes) {
    bool python = std::any_of(process.threads.begin(), process.threads.end(),
                              [](const ThreadRecord& t) { return !t.python_frames.empty(); });
    if (python) with_python++;
    if (has_native_stacks(process)) with_native++;
  }
  triage.native = with_python > 0 && with_native == with_python;
  if (!triage.native && with_native > 0) {
    triage.notes.push_back(fmt::format(
        "native stacks left out: {} of {} processes have them (analyse all with --native)",
        with_native, with_python));
  }
  Interner interner(triage);
  for (const ProcessRecord& process : triage.processes)
    triage.folded.push_back(fold_threads(process, triage.native, interner));
  mark_children(triage);
  build_tree(triage);
  classify(triage);
  triage.verdict = decide_verdict(triage);
  return triage;
}

}  // namespace hangpy::triage
