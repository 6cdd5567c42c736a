#include "report/asyncio_report.h"

#include "base/printable.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace hangpy::report {
namespace {

using cpython::AsyncTask;
using cpython::TaskState;

std::string hex(uint64_t address) { return fmt::format("0x{:x}", address); }

std::string where(const cpython::PythonFrame& frame) {
  const std::string& name = frame.qualname.empty() ? frame.function : frame.qualname;
  if (frame.line) return fmt::format("{} at {}:{}", name, frame.file, *frame.line);
  return fmt::format("{} at {}", name, frame.file);
}

std::string thread_text(uint64_t thread_id, const cpython::ProcessStacks& stacks) {
  for (const cpython::PythonThread& thread : stacks.threads)
    if (thread.thread_id == thread_id && thread.name)
      return fmt::format("thread {} \"{}\"", thread_id, *thread.name);
  return fmt::format("thread {}", thread_id);
}

// "pending, awaiting Future pending, 1 callback" / "running on thread 1 "MainThread"".
std::string status(const AsyncTask& task, const diagnosis::TaskWait& wait,
                   const cpython::ProcessStacks& stacks) {
  std::string text(cpython::task_state_name(task.state));
  if (task.thread_id) text += " on " + thread_text(*task.thread_id, stacks);
  if (wait.kind) text += ", awaiting " + wait.detail;
  return text;
}

std::string kind_name(const diagnosis::TaskWait& wait) {
  return wait.kind ? diagnosis::wait_kind_name(*wait.kind) : "none";
}

// What identifies a chain when many tasks fold into one line: the frames and what they await.
std::string chain_key(const AsyncTask& task, const diagnosis::TaskWait& wait) {
  std::string key = kind_name(wait);
  for (const cpython::PythonFrame& frame : task.coroutine_stack) key += "|" + where(frame);
  return key;
}

struct Chain {
  std::vector<const AsyncTask*> members;
};

// Tasks with the same coroutine chain and await kind, most common first.
std::vector<Chain> chains_of(const diagnosis::TaskForest& forest) {
  std::map<std::string, Chain> by_key;
  for (const AsyncTask& task : forest.tasks.tasks)
    by_key[chain_key(task, forest.wait_of(task))].members.push_back(&task);
  std::vector<Chain> chains;
  for (auto& [key, chain] : by_key) chains.push_back(std::move(chain));
  std::stable_sort(chains.begin(), chains.end(),
                   [](const Chain& a, const Chain& b) { return a.members.size() > b.members.size(); });
  return chains;
}

void print_tree(const AsyncTask& task, const diagnosis::TaskForest& forest,
                const std::unordered_map<uint64_t, const AsyncTask*>& by_address,
                const std::unordered_map<uint64_t, std::vector<uint64_t>>& children,
                const cpython::ProcessStacks& stacks, const std::string& prefix, bool last, bool root,
                std::unordered_set<uint64_t>& printed, std::string& out) {
  const std::string branch = root ? "" : (last ? "└── " : "├── ");
  const std::string below = root ? "" : (last ? "    " : "│   ");
  if (!printed.insert(task.address).second) {
    out += fmt::format("{}{}{} (shown above)\n", prefix, branch, task.name);
    return;
  }
  out += fmt::format("{}{}{} ({})\n", prefix, branch, task.name, status(task, forest.wait_of(task), stacks));
  for (const cpython::PythonFrame& frame : task.coroutine_stack)
    out += fmt::format("{}{}    coroutine {}\n", prefix, below, where(frame));
  if (task.error) out += fmt::format("{}{}    (chain cut: {})\n", prefix, below, task.error->describe());
  auto found = children.find(task.address);
  if (found == children.end()) return;
  const std::vector<uint64_t>& kids = found->second;
  for (size_t i = 0; i < kids.size(); ++i) {
    auto child = by_address.find(kids[i]);
    if (child == by_address.end()) continue;
    print_tree(*child->second, forest, by_address, children, stacks, prefix + below, i + 1 == kids.size(),
               false, printed, out);
  }
}

}  // namespace

namespace {
std::string format_tasks_raw(const diagnosis::TaskForest& forest, const cpython::ProcessStacks& stacks);
}  // namespace

// Task names, coroutine names and files are the target's: the whole text is escaped for the
// terminal (it holds no colours of ours).
std::string format_asyncio_tasks(const diagnosis::TaskForest& forest, const cpython::ProcessStacks& stacks) {
  return for_terminal(format_tasks_raw(forest, stacks), true);
}

namespace {
std::string format_tasks_raw(const diagnosis::TaskForest& forest,
                             const cpython::ProcessStacks& stacks) {
  const cpython::AsyncioTasks& tasks = forest.tasks;
  if (!tasks.imported) return "";
  if (tasks.unsupported) return fmt::format("\nasyncio: imported, but {}\n", *tasks.unsupported);
  std::map<TaskState, size_t> counts;
  for (const AsyncTask& task : tasks.tasks) ++counts[task.state];
  std::string out = fmt::format("\nasyncio: {} task{}", tasks.total, tasks.total == 1 ? "" : "s");
  std::vector<std::string> parts;
  for (TaskState state : {TaskState::kRunning, TaskState::kPending, TaskState::kDone, TaskState::kCancelled})
    if (counts[state]) parts.push_back(fmt::format("{} {}", counts[state], cpython::task_state_name(state)));
  if (!parts.empty()) out += " (" + fmt::format("{}", fmt::join(parts, ", ")) + ")";
  if (tasks.tasks.size() < tasks.total) out += fmt::format(", {} read in full", tasks.tasks.size());
  out += "\n";
  std::unordered_map<uint64_t, const AsyncTask*> by_address;
  for (const AsyncTask& task : tasks.tasks) by_address[task.address] = &task;
  for (const auto& cycle : forest.cycles) {
    std::vector<std::string> names;
    for (uint64_t address : cycle) names.push_back(by_address.at(address)->name);
    std::vector<std::string> steps;
    for (uint64_t address : cycle) {
      const AsyncTask& task = *by_address.at(address);
      steps.push_back(fmt::format("{} awaits {}", task.name, forest.wait_of(task).detail));
    }
    out += fmt::format("deadlock: tasks {} wait for each other ({})\n", fmt::join(names, ", "),
                       fmt::join(steps, "; "));
  }
  for (const std::string& warning : tasks.warnings) out += fmt::format("warning: {}\n", warning);
  if (tasks.tasks.empty()) return out;

  if (tasks.tasks.size() > kMaxTasksListed) {
    // Fold: one line per distinct chain, most common first, with a few of its tasks' names.
    const std::vector<Chain> chains = chains_of(forest);
    out += fmt::format("{} distinct coroutine chains:\n", chains.size());
    for (size_t g = 0; g < chains.size() && g < kMaxTasksListed; ++g) {
      const auto& members = chains[g].members;
      const AsyncTask& first = *members.front();
      std::vector<std::string> names;
      for (size_t i = 0; i < members.size() && i < 3; ++i) names.push_back(members[i]->name);
      out += fmt::format("{:>8} tasks like {}{} ({})\n", members.size(), fmt::join(names, ", "),
                         members.size() > 3 ? ", ..." : "", status(first, forest.wait_of(first), stacks));
      for (const cpython::PythonFrame& frame : first.coroutine_stack)
        out += fmt::format("             coroutine {}\n", where(frame));
    }
    return out;
  }

  // The table, like `python -m asyncio ps`.
  size_t name_width = 4;
  for (const AsyncTask& task : tasks.tasks) name_width = std::max(name_width, std::min<size_t>(task.name.size(), 40));
  out += fmt::format("  {:<{}}  {:<9}  {:<40}  {}\n", "task", name_width, "state", "awaits", "innermost coroutine");
  for (const AsyncTask& task : tasks.tasks) {
    const diagnosis::TaskWait& wait = forest.wait_of(task);
    std::string awaits = wait.kind ? wait.detail : "-";
    std::string inner = task.coroutine_stack.empty() ? "-" : where(task.coroutine_stack.front());
    out += fmt::format("  {:<{}}  {:<9}  {:<40}  {}\n", task.name, name_width,
                       cpython::task_state_name(task.state), awaits, inner);
  }

  // The forest: each task under the tasks it is awaited by (roots: awaited by none).
  std::unordered_map<uint64_t, std::vector<uint64_t>> children;
  for (const AsyncTask& task : tasks.tasks)
    for (uint64_t parent : forest.wait_of(task).awaited_by) children[parent].push_back(task.address);
  out += "\n";
  std::unordered_set<uint64_t> printed;
  for (const AsyncTask& task : tasks.tasks) {
    bool awaited = false;
    for (uint64_t parent : forest.wait_of(task).awaited_by) awaited = awaited || by_address.contains(parent);
    if (!awaited) print_tree(task, forest, by_address, children, stacks, "", true, true, printed, out);
  }
  // Tasks only in cycles have no root: start from them.
  for (const AsyncTask& task : tasks.tasks)
    if (!printed.contains(task.address))
      print_tree(task, forest, by_address, children, stacks, "", true, true, printed, out);
  return out;
}
}  // namespace

namespace {

nlohmann::json frames_json(const AsyncTask& task) {
  nlohmann::json frames = nlohmann::json::array();
  for (const cpython::PythonFrame& frame : task.coroutine_stack) {
    frames.push_back({{"function", frame.function},
                      {"qualname", frame.qualname.empty() ? frame.function : frame.qualname},
                      {"file", frame.file},
                      {"line", frame.line ? nlohmann::json(*frame.line) : nlohmann::json(nullptr)}});
  }
  return frames;
}

}  // namespace

void add_asyncio_tasks(nlohmann::json& document, const diagnosis::TaskForest& forest) {
  const cpython::AsyncioTasks& tasks = forest.tasks;
  if (!tasks.imported) return;
  if (tasks.unsupported) {
    document["asyncio"] = {{"unsupported", *tasks.unsupported}};
    return;
  }
  nlohmann::json list = nlohmann::json::array();
  for (const AsyncTask& task : tasks.tasks) {
    if (list.size() >= kMaxTasksInJson) break;
    nlohmann::json frames = frames_json(task);
    const diagnosis::TaskWait& wait = forest.wait_of(task);
    nlohmann::json awaits = nullptr;
    if (wait.kind && task.awaited) {
      nlohmann::json awaited_tasks = nlohmann::json::array();
      for (uint64_t other : wait.waits_for) awaited_tasks.push_back(hex(other));
      awaits = {{"kind", kind_name(wait)},
                {"object", hex(task.awaited->object)},
                {"type", task.awaited->type},
                {"tasks", awaited_tasks},
                {"detail", wait.detail}};
      if (task.awaited->executor_thread) awaits["thread"] = *task.awaited->executor_thread;
    }
    nlohmann::json awaited_by = nlohmann::json::array();
    for (uint64_t other : wait.awaited_by) awaited_by.push_back(hex(other));
    nlohmann::json entry = {{"address", hex(task.address)},
                            {"name", task.name},
                            {"state", std::string(cpython::task_state_name(task.state))},
                            {"thread", task.thread_id ? nlohmann::json(*task.thread_id) : nlohmann::json(nullptr)},
                            {"coroutine_stack", frames},
                            {"awaits", awaits},
                            {"awaited_by", awaited_by}};
    if (task.error) entry["error"] = task.error->describe();
    list.push_back(std::move(entry));
  }
  nlohmann::json cycles = nlohmann::json::array();
  for (const auto& cycle : forest.cycles) {
    nlohmann::json ring = nlohmann::json::array();
    for (uint64_t address : cycle) ring.push_back(hex(address));
    cycles.push_back(ring);
  }
  nlohmann::json chains = nlohmann::json::array();
  for (const Chain& chain : chains_of(forest)) {
    const AsyncTask& first = *chain.members.front();
    nlohmann::json names = nlohmann::json::array();
    for (size_t i = 0; i < chain.members.size() && i < 3; ++i) names.push_back(chain.members[i]->name);
    chains.push_back({{"count", chain.members.size()},
                      {"awaits", kind_name(forest.wait_of(first))},
                      {"coroutine_stack", frames_json(first)},
                      {"first_tasks", names}});
  }
  document["asyncio"] = {{"tasks_total", tasks.total},
                         {"tasks_read", tasks.tasks.size()},
                         {"chains", chains},
                         {"tasks", list},
                         {"cycles", cycles},
                         {"offsets_source", tasks.offsets_source},
                         {"warnings", tasks.warnings}};
}

}  // namespace hangpy::report
