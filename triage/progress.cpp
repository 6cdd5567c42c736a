#include "triage/progress.h"

#include "base/ascii_case.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "triage/place.h"

namespace hangpy::triage {
namespace {

bool runs_python(const ThreadRecord& thread) {
  return !thread.asyncio_task && !thread.python_frames.empty();
}

// The frames without their lines: the functions the thread is in.
bool same_functions(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Frame& x, const Frame& y) {
    return x.function == y.function && x.file == y.file;
  });
}

// The first local whose value differs between two looks at the same frames ("step" in
// `train`): a loop that waits in the same line every time it is looked at still moves on.
std::optional<std::string> changed_local(const ThreadRecord& before, const ThreadRecord& after) {
  if (before.python_locals.size() != after.python_locals.size()) return std::nullopt;
  for (size_t frame = 0; frame < after.python_locals.size(); ++frame) {
    std::map<std::string, std::string> earlier(before.python_locals[frame].begin(), before.python_locals[frame].end());
    for (const auto& [name, value] : after.python_locals[frame]) {
      auto found = earlier.find(name);
      if (found != earlier.end() && found->second != value)
        return fmt::format("`{}` in `{}`", name, after.python_frames[frame].function);
    }
  }
  return std::nullopt;
}

// Words in a helper thread's name or functions. A thread of the job's work is rarely named so;
// --must-move settles the rest.
constexpr std::string_view kHelperWords[] = {
    "heartbeat", "watchdog", "monitor", "logger", "logging", "log_", "flush", "metric",
    "progress", "tqdm", "keepalive", "keep_alive", "ping", "telemetry", "stats", "profil",
    "reporter", "tensorboard", "wandb", "mlflow", "spinner", "beat"};

bool has_helper_word(std::string_view name) {
  const std::string text = ascii_lowercase(name);
  return std::any_of(std::begin(kHelperWords), std::end(kHelperWords),
                     [&](std::string_view word) { return text.find(word) != std::string::npos; });
}

bool named_by(const ThreadRecord& thread, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& name) {
    return (name == "main" && thread.main_thread) || (thread.name && *thread.name == name);
  });
}

bool works(const ThreadRecord& thread, const ProgressRules& rules) {
  if (!rules.must_move.empty()) return named_by(thread, rules.must_move);
  return !is_helper_thread(thread);
}

std::string place_or_none(const ThreadRecord& thread) {
  auto place = place_of(thread.python_frames);
  return place ? format_place(*place) : std::string("no Python frame");
}

// Threads by native id; without one (an old document), by position among the Python threads.
std::map<std::string, const ThreadRecord*> python_threads(const ProcessRecord& record) {
  std::map<std::string, const ThreadRecord*> threads;
  size_t position = 0;
  for (const ThreadRecord& thread : record.threads) {
    if (!runs_python(thread)) continue;
    const std::string key = thread.native_thread_id ? std::to_string(*thread.native_thread_id)
                                                    : fmt::format("#{}", position);
    threads.emplace(key, &thread);
    ++position;
  }
  return threads;
}

ThreadMotion compare_thread(const ThreadRecord& before, const ThreadRecord& after,
                            std::optional<double> seconds) {
  ThreadMotion motion;
  motion.native_thread_id = after.native_thread_id;
  motion.name = after.name;
  motion.before = place_or_none(before);
  motion.after = place_or_none(after);
  if (seconds && *seconds > 0 && before.cpu_seconds && after.cpu_seconds)
    motion.cpu_share = std::max(0.0, *after.cpu_seconds - *before.cpu_seconds) / *seconds;
  // Runnable time is CPU time and run-queue wait: a spinning thread on a crowded CPU gets little
  // of the first and much of the second, and is no less busy.
  if (motion.cpu_share && before.run_delay_seconds && after.run_delay_seconds)
    motion.runnable_share = *motion.cpu_share + std::max(0.0, *after.run_delay_seconds - *before.run_delay_seconds) / *seconds;
  const bool on_cpu = motion.cpu_share && *motion.cpu_share >= kBusyCpuShare;
  const bool runnable = (motion.runnable_share && *motion.runnable_share >= kBusyCpuShare) ||
                        (before.run_state == 'R' && after.run_state == 'R');
  const bool busy = on_cpu || runnable;
  const uint64_t io = before.io_bytes && after.io_bytes && *after.io_bytes > *before.io_bytes
                          ? *after.io_bytes - *before.io_bytes : 0;
  if (!same_functions(before.python_frames, after.python_frames)) {
    motion.motion = Motion::kMoved;
    motion.why = "in other frames";
  } else if (busy) {
    motion.motion = Motion::kBusy;
    if (on_cpu)
      motion.why = fmt::format("{:.0f}% of a CPU in the same frames", *motion.cpu_share * 100);
    else if (motion.runnable_share)
      motion.why = fmt::format("runnable {:.0f}% of the interval, on the CPU {:.0f}%, in the same frames",
                               std::min(*motion.runnable_share, 1.0) * 100, *motion.cpu_share * 100);
    else
      motion.why = "runnable (state R) at both looks, in the same frames";
  } else if (before.python_frames != after.python_frames) {
    motion.motion = Motion::kMoved;
    motion.why = "on another line";
  } else if (auto local = changed_local(before, after)) {
    motion.motion = Motion::kMoved;
    motion.why = fmt::format("in the same frames, but {} changed", *local);
  } else if (io > 0) {
    motion.motion = Motion::kMoved;
    motion.why = fmt::format("in the same frames, but read or wrote {} bytes", io);
  } else {
    motion.motion = Motion::kStill;
    motion.why = motion.cpu_share ? fmt::format("the same frames, {:.0f}% of a CPU", *motion.cpu_share * 100)
                                  : std::string("the same frames");
  }
  return motion;
}

// A thread only one look has: new (only the later) or gone (only the earlier).
ThreadMotion in_one_look(const ThreadRecord& thread, Motion motion) {
  ThreadMotion result;
  result.native_thread_id = thread.native_thread_id;
  result.name = thread.name;
  result.motion = motion;
  (motion == Motion::kNew ? result.after : result.before) = place_or_none(thread);
  result.why = motion == Motion::kNew ? "started since the first look" : "ended since the first look";
  return result;
}

}  // namespace

const char* motion_name(Motion motion) {
  switch (motion) {
    case Motion::kMoved: return "moved";
    case Motion::kBusy: return "busy";
    case Motion::kStill: return "still";
    case Motion::kNew: return "new";
    case Motion::kGone: return "gone";
  }
  return "?";
}

bool is_helper_thread(const ThreadRecord& thread) {
  if (thread.main_thread) return false;
  if (thread.idle) return true;
  if (thread.name && has_helper_word(*thread.name)) return true;
  // The thread's own function: the first frame past threading's bootstrap (its target).
  for (const Frame& frame : thread.python_frames) {
    if (frame.file.ends_with("threading.py")) continue;
    return has_helper_word(frame.function);
  }
  return false;
}

std::string helpers_moving_text(const ProcessMotion& motion) {
  std::vector<std::string> still, helpers;
  auto label = [](const ThreadMotion& thread) {
    return thread.name ? *thread.name
                       : thread.native_thread_id ? fmt::format("LWP {}", *thread.native_thread_id) : std::string("a thread");
  };
  for (const ThreadMotion& thread : motion.threads) {
    if (thread.works && thread.motion == Motion::kStill) still.push_back(label(thread));
    if (!thread.works && thread.motion != Motion::kStill) helpers.push_back(label(thread));
  }
  if (still.empty() || helpers.empty()) return {};
  return fmt::format("{} still; {} moving (a helper: not the job's progress)", fmt::join(still, ", "),
                     fmt::join(helpers, ", "));
}

ProcessMotion compare_looks(const ProcessRecord& before, const ProcessRecord& after,
                            std::optional<double> seconds_between, const ProgressRules& rules) {
  ProcessMotion result;
  result.seconds = before.taken_at && after.taken_at ? std::optional<double>(*after.taken_at - *before.taken_at)
                                                     : seconds_between;
  const auto earlier = python_threads(before);
  const auto later = python_threads(after);
  for (const auto& [key, thread] : later) {
    auto found = earlier.find(key);
    if (found == earlier.end()) {
      result.threads.push_back(in_one_look(*thread, Motion::kNew));
      result.threads.back().works = works(*thread, rules);
      continue;
    }
    result.threads.push_back(compare_thread(*found->second, *thread, result.seconds));
    // A helper in both looks; a pool's thread that took work in between works.
    result.threads.back().works = works(*found->second, rules) || works(*thread, rules);
    if (!found->second->python_locals.empty() && !thread->python_locals.empty()) result.locals_compared = true;
  }
  for (const auto& [key, thread] : earlier) {
    if (!later.contains(key)) {
      result.threads.push_back(in_one_look(*thread, Motion::kGone));
      result.threads.back().works = works(*thread, rules);
    }
  }
  // A process of helpers alone (or whose named threads are gone): every thread counts.
  const bool any_work = std::any_of(result.threads.begin(), result.threads.end(),
                                    [](const ThreadMotion& thread) { return thread.works; });
  auto any = [&](Motion wanted) {
    return std::any_of(result.threads.begin(), result.threads.end(), [&](const ThreadMotion& thread) {
      return thread.motion == wanted && (thread.works || !any_work);
    });
  };
  if (any(Motion::kMoved) || any(Motion::kNew) || any(Motion::kGone)) result.motion = Motion::kMoved;
  else if (any(Motion::kBusy)) result.motion = Motion::kBusy;
  else result.motion = Motion::kStill;
  return result;
}

void note_moving_children(const std::vector<const ProcessRecord*>& processes,
                          const std::vector<ProcessMotion*>& motions) {
  const size_t count = std::min(processes.size(), motions.size());
  // Each process by host and PID, so that a child finds its parent at once: a job of 10,000 ranks
  // is compared this way too (diff, --again-after).
  std::map<std::pair<std::string, int64_t>, size_t> by_pid;
  for (size_t index = 0; index < count; ++index)
    if (processes[index]->labels.pid)
      by_pid.emplace(std::pair(processes[index]->labels.host.value_or(""), *processes[index]->labels.pid), index);
  // From every process that works, up its parents: a grandparent (torchrun's agent over a worker
  // with DataLoader workers) waits for a child that waits for moving children of its own.
  std::vector<size_t> working;
  for (size_t index = 0; index < count; ++index)
    if (motions[index] != nullptr && (motions[index]->motion == Motion::kMoved || motions[index]->motion == Motion::kBusy))
      working.push_back(index);
  while (!working.empty()) {
    const ProcessRecord& child = *processes[working.back()];
    working.pop_back();
    if (!child.labels.pid || !child.labels.ppid) continue;
    auto parent = by_pid.find(std::pair(child.labels.host.value_or(""), *child.labels.ppid));
    if (parent == by_pid.end()) continue;
    ProcessMotion* motion = motions[parent->second];
    if (motion == nullptr || motion->motion != Motion::kStill) continue;
    auto& known = motion->moving_children;
    if (std::find(known.begin(), known.end(), *child.labels.pid) != known.end()) continue;
    if (known.empty()) working.push_back(parent->second);  // it now waits for moving children
    known.push_back(*child.labels.pid);
  }
}

std::string process_key(const ProcessRecord& process) {
  return fmt::format("{}/{}", process.labels.host.value_or(""),
                     process.labels.pid ? std::to_string(*process.labels.pid) : process.source);
}

std::string python_places(const ProcessRecord& record, size_t most) {
  std::vector<std::string> places;
  for (const ThreadRecord& thread : record.threads) {
    if (!runs_python(thread)) continue;
    std::string place = place_or_none(thread);
    if (std::find(places.begin(), places.end(), place) == places.end()) places.push_back(std::move(place));
  }
  std::string text;
  for (size_t i = 0; i < places.size() && i < most; ++i) text += (i ? "; " : "") + places[i];
  if (places.size() > most) text += fmt::format("; {} more", places.size() - most);
  return text;
}

}  // namespace hangpy::triage
