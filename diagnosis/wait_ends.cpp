#include "diagnosis/wait_ends.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/program_place.h"

namespace hangpy::diagnosis {
namespace {

// No more starts are named in one merged chain; the rest are counted.
constexpr size_t kStartsNamed = 3;

bool ends_outside(const BlockedOn& blocked) {
  return blocked.child_pid || !blocked.other_end_pids.empty() || blocked.holder_gone;
}

// Where the thread is, in the program's words: " in `BaseProcess.join` at train.py:9".
std::string place(const cpython::PythonThread& thread) {
  std::vector<PlaceFrame> frames;  // outermost first
  for (auto frame = thread.frames.rbegin(); frame != thread.frames.rend(); ++frame)
    frames.push_back({frame->qualname.empty() ? frame->function : frame->qualname, frame->file, frame->line});
  const std::optional<PlaceIndexes> at = program_place(frames);
  if (!at) return "";
  return " in " + format_place(frames[at->function_of].function, frames[at->line_of].file,
                               frames[at->line_of].line);
}

// What the chain's last thread does, after "which".
std::string end_text(const cpython::ProcessStacks& stacks, const ProcessDiagnosis& diagnosis,
                     size_t end) {
  const ThreadDiagnosis& thread = diagnosis.threads[end];
  if (thread.blocked_on.kind == WaitKind::kRunning)
    return "runs" + place(stacks.threads[end]);
  return "waits for " + describe_blocked_on(thread.blocked_on, stacks) + place(stacks.threads[end]);
}

std::string starts_text(const cpython::ProcessStacks& stacks, const std::vector<size_t>& starts) {
  std::vector<std::string> names;
  for (size_t i = 0; i < starts.size() && i < kStartsNamed; ++i)
    names.push_back(thread_label(stacks.threads[starts[i]]));
  if (starts.size() > kStartsNamed) names.push_back(fmt::format("{} more threads", starts.size() - kStartsNamed));
  if (names.size() == 1) return names.front();
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return text;
}

}  // namespace

std::vector<WaitChain> find_wait_chains(const cpython::ProcessStacks& stacks,
                                        const ProcessDiagnosis& diagnosis) {
  const size_t count = std::min(stacks.threads.size(), diagnosis.threads.size());
  std::vector<bool> in_cycle(count, false);
  for (const WaitCycle& cycle : diagnosis.cycles)
    for (size_t thread : cycle.threads)
      if (thread < count) in_cycle[thread] = true;
  // i -> the thread it waits for, where that is another thread of this process.
  std::vector<std::optional<size_t>> next(count);
  for (size_t i = 0; i < count; ++i) {
    const std::optional<size_t>& owner = diagnosis.threads[i].blocked_on.owner;
    if (owner && *owner < count && *owner != i) next[i] = *owner;
  }
  auto follows = [&](size_t i) { return !in_cycle[i] && !diagnosis.threads[i].idle; };
  std::vector<bool> waited_for(count, false);
  for (size_t i = 0; i < count; ++i)
    if (next[i] && follows(i)) waited_for[*next[i]] = true;

  // Chains that go on the same way (the same next threads, the first wait described alike) are
  // merged: a pool's workers all waiting for one lock's holder are one line.
  std::map<std::pair<std::vector<size_t>, std::string>, WaitChain> merged;
  std::vector<std::pair<std::vector<size_t>, std::string>> order;
  for (size_t start = 0; start < count; ++start) {
    if (!follows(start) || waited_for[start]) continue;
    if (!next[start] && !ends_outside(diagnosis.threads[start].blocked_on)) continue;
    std::vector<size_t> path{start};
    bool reaches_cycle = false;
    while (next[path.back()]) {
      const size_t owner = *next[path.back()];
      if (in_cycle[owner] || std::find(path.begin(), path.end(), owner) != path.end()) {
        reaches_cycle = true;  // the cycle's own line says where it ends: nowhere
        break;
      }
      path.push_back(owner);
    }
    if (reaches_cycle) continue;
    std::string steps;
    for (size_t k = 0; k + 1 < path.size(); ++k)
      steps += (k == 0 ? " waits for " : ", which waits for ") +
               describe_blocked_on(diagnosis.threads[path[k]].blocked_on, stacks);
    auto key = std::make_pair(std::vector<size_t>(path.begin() + 1, path.end()),
                              path.size() > 1 ? steps : std::to_string(start));
    auto [found, inserted] = merged.try_emplace(key);
    WaitChain& chain = found->second;
    if (inserted) {
      order.push_back(key);
      chain.threads = key.first;
      chain.ends_outside = ends_outside(diagnosis.threads[path.back()].blocked_on);
      chain.text = steps;  // completed below, once the starts are known
    }
    chain.starts.push_back(start);
  }
  std::vector<WaitChain> chains;
  for (const auto& key : order) {
    WaitChain chain = std::move(merged[key]);
    const size_t end = chain.threads.empty() ? chain.starts.front() : chain.threads.back();
    const bool plural = chain.starts.size() > 1;
    if (chain.threads.empty()) {
      chain.text = fmt::format("wait chain: {}{} waits for {}",
                               starts_text(stacks, chain.starts), place(stacks.threads[end]),
                               describe_blocked_on(diagnosis.threads[end].blocked_on, stacks));
    } else {
      std::string steps = chain.text;
      if (plural) steps.replace(0, std::string(" waits for ").size(), " wait for ");
      chain.text = fmt::format("wait chain: {}{}, which {}", starts_text(stacks, chain.starts),
                               steps, end_text(stacks, diagnosis, end));
    }
    chains.push_back(std::move(chain));
  }
  std::stable_sort(chains.begin(), chains.end(), [](const WaitChain& a, const WaitChain& b) {
    return a.threads.size() + a.starts.size() > b.threads.size() + b.starts.size();
  });
  return chains;
}

}  // namespace hangpy::diagnosis
