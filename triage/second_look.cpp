#include "triage/second_look.h"

#include <algorithm>

#include <fmt/format.h>

#include "triage/verdict.h"

namespace hangpy::triage {
namespace {

// The thread whose motion the line gives as its reason: one that moved, else one that is busy.
const ThreadMotion* telling_thread(const ProcessMotion& motion, Motion wanted) {
  for (const ThreadMotion& thread : motion.threads)
    if (thread.motion == wanted) return &thread;
  return nullptr;
}

std::string thread_reason(const ThreadMotion& thread) {
  const std::string name = thread.name ? *thread.name : std::string("a thread");
  if (thread.motion == Motion::kMoved && thread.before != thread.after)
    return fmt::format("{} {}: was in {}, now in {}", name, thread.why, thread.before, thread.after);
  return fmt::format("{}: {}", name, thread.why);
}

}  // namespace

std::map<int, ProcessMotion> motions_since(const Triage& triage, const std::vector<ProcessRecord>& later) {
  std::map<std::string, const ProcessRecord*> by_key;
  for (const ProcessRecord& process : later) by_key.emplace(process_key(process), &process);
  std::map<int, ProcessMotion> motions;
  for (size_t index = 0; index < triage.processes.size(); ++index) {
    auto found = by_key.find(process_key(triage.processes[index]));
    if (found != by_key.end())
      motions.emplace(static_cast<int>(index), compare_looks(triage.processes[index], *found->second));
  }
  std::vector<const ProcessRecord*> records;
  std::vector<ProcessMotion*> pointers;
  for (auto& [index, motion] : motions) {
    records.push_back(&triage.processes[static_cast<size_t>(index)]);
    pointers.push_back(&motion);
  }
  note_moving_children(records, pointers);
  return motions;
}

std::vector<std::string> second_look_lines(const Triage& triage, const std::map<int, ProcessMotion>& motions) {
  std::vector<std::string> lines;
  for (size_t index = 0; index < triage.classes.size(); ++index) {
    const EquivalenceClass& group = triage.classes[index];
    std::vector<int> moved, busy, still, ended, parents;
    std::optional<double> seconds;
    const ThreadMotion* reason = nullptr;
    for (int process : group.processes) {
      auto found = motions.find(process);
      if (found == motions.end()) {
        ended.push_back(process);
        continue;
      }
      if (!seconds) seconds = found->second.seconds;
      switch (found->second.motion) {
        case Motion::kMoved:
        case Motion::kNew:
        case Motion::kGone:
          moved.push_back(process);
          if (!reason) reason = telling_thread(found->second, Motion::kMoved);
          if (!reason) reason = telling_thread(found->second, Motion::kNew);
          if (!reason) reason = telling_thread(found->second, Motion::kGone);
          break;
        case Motion::kBusy: busy.push_back(process); break;
        case Motion::kStill:
          (found->second.moving_children.empty() ? still : parents).push_back(process);
          break;
      }
    }
    const std::string who = describe_class(triage, static_cast<int>(index), false);
    const std::string span = seconds ? fmt::format(" in {:.0f} s", *seconds) : std::string();
    std::string line;
    if (!moved.empty()) {
      line = fmt::format("{}: slow, not stuck: {} moved{}", who, describe_processes(triage, moved), span);
      if (reason) line += fmt::format(" ({})", thread_reason(*reason));
    } else if (!busy.empty()) {
      const ProcessMotion& first = motions.at(busy.front());
      const ThreadMotion* spinning = telling_thread(first, Motion::kBusy);
      line = fmt::format("{}: busy{}: in the same frames, burning CPU{}", who, span,
                         spinning ? fmt::format(" ({})", thread_reason(*spinning)) : std::string());
    } else if (!still.empty() && std::none_of(still.begin(), still.end(), [&](int process) {
                 return motions.at(process).locals_compared;
               })) {
      // Without locals a loop that waits on the same line each step looks the same at both looks.
      line = fmt::format("{}: no change seen in frames{} (locals not compared: give --locals{})", who, span,
                         seconds ? fmt::format("; under {:.0f}% of a CPU, no data read or written", kBusyCpuShare * 100)
                                 : std::string());
    } else if (!still.empty()) {
      line = seconds ? fmt::format("{}: stuck: no Python thread moved{} (the same frames and locals, "
                                   "under {:.0f}% of a CPU, no data read or written)", who, span,
                                   kBusyCpuShare * 100)
                     : fmt::format("{}: stuck: no Python thread moved (the same frames and locals; "
                                   "the looks do not say when they were taken, so CPU time was not "
                                   "compared)", who);
    }
    if (!parents.empty())
      line += fmt::format("{}{} waiting for moving children, not stuck", line.empty() ? who + ": " : "; ",
                          describe_processes(triage, parents));
    if (!ended.empty())
      line += fmt::format("{}{} ended before the second look", line.empty() ? who + ": " : "; ",
                          describe_processes(triage, ended));
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace hangpy::triage
