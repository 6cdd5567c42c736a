#include "triage/progress.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

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

std::string where(const ThreadRecord& thread) {
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
  motion.before = where(before);
  motion.after = where(after);
  if (seconds && *seconds > 0 && before.cpu_seconds && after.cpu_seconds)
    motion.cpu_share = std::max(0.0, *after.cpu_seconds - *before.cpu_seconds) / *seconds;
  const bool busy = motion.cpu_share && *motion.cpu_share >= kBusyCpuShare;
  const uint64_t io = before.io_bytes && after.io_bytes && *after.io_bytes > *before.io_bytes
                          ? *after.io_bytes - *before.io_bytes : 0;
  if (!same_functions(before.python_frames, after.python_frames)) {
    motion.motion = Motion::kMoved;
    motion.why = "in other frames";
  } else if (busy) {
    motion.motion = Motion::kBusy;
    motion.why = fmt::format("{:.0f}% of a CPU in the same frames", *motion.cpu_share * 100);
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
  (motion == Motion::kNew ? result.after : result.before) = where(thread);
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

ProcessMotion compare_looks(const ProcessRecord& before, const ProcessRecord& after,
                            std::optional<double> seconds_between) {
  ProcessMotion result;
  result.seconds = before.taken_at && after.taken_at ? std::optional<double>(*after.taken_at - *before.taken_at)
                                                     : seconds_between;
  const auto earlier = python_threads(before);
  const auto later = python_threads(after);
  for (const auto& [key, thread] : later) {
    auto found = earlier.find(key);
    if (found == earlier.end()) {
      result.threads.push_back(in_one_look(*thread, Motion::kNew));
      continue;
    }
    result.threads.push_back(compare_thread(*found->second, *thread, result.seconds));
  }
  for (const auto& [key, thread] : earlier) {
    if (!later.contains(key)) result.threads.push_back(in_one_look(*thread, Motion::kGone));
  }
  auto any = [&](Motion wanted) {
    return std::any_of(result.threads.begin(), result.threads.end(),
                       [wanted](const ThreadMotion& thread) { return thread.motion == wanted; });
  };
  if (any(Motion::kMoved) || any(Motion::kNew) || any(Motion::kGone)) result.motion = Motion::kMoved;
  else if (any(Motion::kBusy)) result.motion = Motion::kBusy;
  else result.motion = Motion::kStill;
  return result;
}

std::string process_key(const ProcessRecord& process) {
  return fmt::format("{}/{}", process.labels.host.value_or(""),
                     process.labels.pid ? std::to_string(*process.labels.pid) : process.source);
}

std::string python_places(const ProcessRecord& record, size_t most) {
  std::vector<std::string> places;
  for (const ThreadRecord& thread : record.threads) {
    if (!runs_python(thread)) continue;
    std::string place = where(thread);
    if (std::find(places.begin(), places.end(), place) == places.end()) places.push_back(std::move(place));
  }
  std::string text;
  for (size_t i = 0; i < places.size() && i < most; ++i) text += (i ? "; " : "") + places[i];
  if (places.size() > most) text += fmt::format("; {} more", places.size() - most);
  return text;
}

}  // namespace hangpy::triage
