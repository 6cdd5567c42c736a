#include "triage/differing_locals.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "triage/labels.h"
#include "triage/place.h"
#include "triage/verdict.h"

namespace hangpy::triage {
namespace {

constexpr size_t kMaxVariables = 3;
constexpr size_t kMaxValueLength = 40;

using Locals = std::vector<std::pair<std::string, std::string>>;

// The thread of a process that tells its story: the main thread, else its first thread (a
// process whose main thread runs no Python).
const ThreadRecord* story_thread(const ProcessRecord& process) {
  const ThreadRecord* first = nullptr;
  for (const ThreadRecord& thread : process.threads) {
    if (thread.asyncio_task || thread.python_frames.empty()) continue;
    if (thread.main_thread) return &thread;
    if (first == nullptr) first = &thread;
  }
  return first;
}

bool same_function(const Frame& a, const Frame& b) { return a.function == b.function && a.file == b.file; }

// A value that names an object by its address differs between any two processes: it says
// nothing about why one is stuck.
bool comparable(const std::string& repr) {
  return repr.find("0x") == std::string::npos && repr.size() <= kMaxValueLength;
}

std::string list_values(const std::vector<std::pair<std::string, std::string>>& values) {
  std::vector<std::string> parts;
  for (const auto& [name, repr] : values) parts.push_back(fmt::format("{} = {}", name, repr));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::optional<std::string> differing_locals(const Triage& triage, int odd, int majority) {
  std::vector<const ThreadRecord*> odd_threads, other_threads;
  for (auto [cls, out] : {std::pair{odd, &odd_threads}, std::pair{majority, &other_threads}}) {
    for (int process : triage.classes[cls].processes) {
      const ThreadRecord* thread = story_thread(triage.processes[process]);
      if (thread == nullptr || thread->python_locals.size() != thread->python_frames.size()) return std::nullopt;
      out->push_back(thread);
    }
  }
  if (odd_threads.empty() || other_threads.empty()) return std::nullopt;
  // The deepest frame (outermost first) that every thread calls the same function in.
  const ThreadRecord& reference = *odd_threads.front();
  size_t shared = 0;
  auto shares = [&](const ThreadRecord* thread, size_t depth) {
    return depth < thread->python_frames.size() &&
           same_function(thread->python_frames[depth], reference.python_frames[depth]);
  };
  while (shared < reference.python_frames.size() &&
         std::all_of(odd_threads.begin(), odd_threads.end(), [&](auto* t) { return shares(t, shared); }) &&
         std::all_of(other_threads.begin(), other_threads.end(), [&](auto* t) { return shares(t, shared); }))
    ++shared;
  if (shared == 0) return std::nullopt;
  const size_t depth = shared - 1;
  // One value in every thread of a group, or none.
  auto value_of_group = [&](const std::vector<const ThreadRecord*>& threads,
                            const std::string& name) -> std::optional<std::string> {
    std::optional<std::string> value;
    for (const ThreadRecord* thread : threads) {
      const FrameLocals& locals = thread->python_locals[depth];
      auto found = std::find_if(locals.begin(), locals.end(), [&](const auto& v) { return v.first == name; });
      if (found == locals.end() || !comparable(found->second)) return std::nullopt;
      if (value && *value != found->second) return std::nullopt;
      value = found->second;
    }
    return value;
  };
  Locals odd_values, other_values;
  for (const auto& [name, repr] : reference.python_locals[depth]) {
    if (odd_values.size() == kMaxVariables) break;
    const std::optional<std::string> odd_value = value_of_group(odd_threads, name);
    const std::optional<std::string> other_value = value_of_group(other_threads, name);
    if (!odd_value || !other_value || *odd_value == *other_value) continue;
    odd_values.emplace_back(name, *odd_value);
    other_values.emplace_back(name, *other_value);
  }
  if (odd_values.empty()) return std::nullopt;
  const std::vector<int>& odd_members = triage.classes[odd].processes;
  // By rank where every member has one ("rank 2", "ranks 2-3"): a group is not "odd" when no
  // majority stands against it.
  const bool ranked = std::all_of(odd_members.begin(), odd_members.end(),
                                  [&](int p) { return rank_of(triage.processes[p].labels).has_value(); });
  std::string odd_name = odd_members.size() == 1 ? "the odd one" : "the odd ones";
  if (ranked && odd_members.size() == 1)
    odd_name = fmt::format("rank {}", *rank_of(triage.processes[odd_members.front()].labels));
  else if (ranked)
    odd_name = describe_processes(triage, odd_members);
  const Frame& frame = reference.python_frames[depth];
  std::string text = fmt::format("in `{}` at {}, which all run: {}: {}; others: {}", frame.function,
                                 base_name(frame.file), odd_name, list_values(odd_values), list_values(other_values));
  // The groups stopped at different lines of that frame: a variable assigned between them (a
  // parameter's default replaced later) differs for that reason alone, which the values cannot
  // tell. Said, so that the line never offers such a value as a cause.
  auto line_of_group = [&](const std::vector<const ThreadRecord*>& threads) -> std::optional<int> {
    std::optional<int> line;
    for (const ThreadRecord* thread : threads) {
      const std::optional<int>& here = thread->python_frames[depth].line;
      if (!here || (line && *line != *here)) return std::nullopt;
      line = here;
    }
    return line;
  };
  const std::optional<int> odd_line = line_of_group(odd_threads), other_line = line_of_group(other_threads);
  if (odd_line && other_line && *odd_line != *other_line)
    text += fmt::format(" (stopped at lines {} and {}: a value set in between may differ for that alone)", *odd_line,
                        *other_line);
  return text;
}

}  // namespace hangpy::triage
