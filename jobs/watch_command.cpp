#include "jobs/watch_command.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/exit_codes.h"
#include "base/printable.h"
#include "base/child_process.h"
#include "jobs/look_records.h"
#include "jobs/watch_options.h"
#include "triage/progress.h"

namespace fs = std::filesystem;

namespace hangpy::jobs {
namespace {

using Clock = std::chrono::steady_clock;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string clock_text(double unix_seconds) {
  const auto whole = static_cast<std::time_t>(unix_seconds);
  std::tm local{};
  localtime_r(&whole, &local);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", &local);
  return text;
}

// One process followed from look to look.
struct Followed {
  triage::ProcessRecord last;
  double still_since = 0;  // when it was last seen making progress (or first seen)
  triage::Motion motion = triage::Motion::kNew;
  std::string why;         // the motion of its most telling thread, in words
  bool busy_throughout = false;  // busy at every look since it last made progress (--busy-is-stuck)
};

struct Watch {
  WatchOptions options;
  std::string self;
  fs::path output;
  std::map<std::string, Followed> followed;
  int looks = 0;
  bool seen_any = false;
};

// The thread that says the most about the process's motion: a moved one, else a busy one; a
// work thread before a helper (triage/progress.h).
std::string telling_reason(const triage::ProcessMotion& motion) {
  for (bool work_only : {true, false}) {
    for (triage::Motion wanted : {triage::Motion::kMoved, triage::Motion::kNew, triage::Motion::kGone,
                                  triage::Motion::kBusy, triage::Motion::kStill}) {
      for (const triage::ThreadMotion& thread : motion.threads) {
        if (thread.motion != wanted || (work_only && !thread.works)) continue;
        const std::string name = thread.name ? for_terminal(*thread.name) : std::string("a thread");
        return fmt::format("{}: {}", name, thread.why);
      }
    }
  }
  return "no Python thread";
}

// A look: the stacks and locals of every selected process now, without cores, into DIR/.looks/N
// (the directory of the look before it is kept; older ones are removed).
LookRecords take_look(Watch& watch) {
  const fs::path looks = watch.output / ".looks";
  const fs::path directory = looks / std::to_string(watch.looks);
  CollectOptions look = watch.options.collect;
  look.cores = CoreKind::kNone;
  look.locals = true;  // a loop variable that changes is progress (triage/progress.h)
  look.native = false;
  look.triage = false;
  look.output_dir = directory.string();
  std::vector<std::string> argv{watch.self};
  for (const std::string& word : collect_arguments(look)) argv.push_back(word);
  // A look that does not end in time (a wedged node, srun waiting) is killed: the next one comes.
  const auto limit = std::chrono::seconds(look.timeout_seconds * 2 + 60);
  ChildResult result = run_child({argv, std::nullopt, true}, limit);
  LookRecords records;
  if (!result.started) {
    records.problems.push_back(result.start_error);
    return records;
  }
  TriageAnalysisOptions reading;
  reading.jobs = 1;  // JSON files only: parsed in this process
  records = read_look({directory.string()}, reading);
  if (result.timed_out) records.problems.push_back("a look took too long and was killed");
  std::error_code ignored;
  if (watch.looks >= 2) fs::remove_all(looks / std::to_string(watch.looks - 2), ignored);
  return records;
}

struct LookSummary {
  size_t moved = 0, busy = 0, still = 0, fresh = 0, stuck = 0;
  size_t waiting = 0;  // still, but waiting for children that move
  double longest_still = 0;
  std::string longest_key;  // the process still the longest
  std::vector<std::string> stuck_keys;
};

// Compares the look with the last, updates each process's time without progress.
LookSummary follow(Watch& watch, LookRecords& look, double now) {
  LookSummary summary;
  std::map<std::string, Followed> next;
  // First every process's motion, then the parents waiting for children that move (their motion
  // depends on the others'), then each one's time without progress.
  std::vector<std::optional<triage::ProcessMotion>> motions(look.processes.size());
  for (size_t index = 0; index < look.processes.size(); ++index) {
    auto known = watch.followed.find(triage::process_key(look.processes[index]));
    if (known != watch.followed.end())
      motions[index] = triage::compare_looks(known->second.last, look.processes[index], std::nullopt,
                                             triage::ProgressRules{watch.options.must_move});
  }
  {
    std::vector<const triage::ProcessRecord*> records;
    std::vector<triage::ProcessMotion*> pointers;
    for (size_t index = 0; index < look.processes.size(); ++index) {
      records.push_back(&look.processes[index]);
      pointers.push_back(motions[index] ? &*motions[index] : nullptr);
    }
    triage::note_moving_children(records, pointers);
  }
  for (size_t index = 0; index < look.processes.size(); ++index) {
    triage::ProcessRecord& process = look.processes[index];
    const std::string key = triage::process_key(process);
    const double taken = process.taken_at.value_or(now);
    Followed state;
    auto known = watch.followed.find(key);
    if (known == watch.followed.end()) {
      state.still_since = taken;
      state.motion = triage::Motion::kNew;
      state.why = "first look";
      state.busy_throughout = true;
      ++summary.fresh;
    } else {
      state = known->second;
      const triage::ProcessMotion& motion = *motions[index];
      state.motion = motion.motion;
      state.why = telling_reason(motion);
      // Still while a helper ticks: say which work thread is still, and that the helper's motion
      // is not taken for progress.
      if (motion.motion == triage::Motion::kStill)
        if (std::string helpers = triage::helpers_moving_text(motion); !helpers.empty()) state.why = for_terminal(helpers);
      const bool waiting = motion.motion == triage::Motion::kStill && !motion.moving_children.empty();
      if (waiting) state.why = fmt::format("waiting for moving children (PID {})", fmt::join(motion.moving_children, ", "));
      const bool progress = motion.motion == triage::Motion::kMoved || waiting ||
                            (motion.motion == triage::Motion::kBusy && !watch.options.busy_is_stuck);
      if (progress) state.still_since = taken;
      // Every look since its last progress saw it burning CPU: a spin, not a wait (--busy-is-stuck).
      state.busy_throughout = progress || (state.busy_throughout && motion.motion == triage::Motion::kBusy);
      if (motion.motion == triage::Motion::kMoved) ++summary.moved;
      else if (motion.motion == triage::Motion::kBusy) ++summary.busy;
      else if (waiting) ++summary.waiting;
      else ++summary.still;
    }
    const double still_for = taken - state.still_since;
    if (still_for > summary.longest_still || summary.longest_key.empty()) summary.longest_key = key;
    summary.longest_still = std::max(summary.longest_still, still_for);
    // The looks come every interval, give or take the time a look takes: a process still for
    // --after less a tenth of an interval has been still across the looks that span --after.
    const double tolerance = std::min(0.1 * watch.options.interval_seconds, 0.5);
    if (still_for + tolerance >= watch.options.after_seconds) {
      ++summary.stuck;
      summary.stuck_keys.push_back(key);
    }
    state.last = std::move(process);
    next[key] = std::move(state);
  }
  watch.followed = std::move(next);
  return summary;
}

void append_look_line(const Watch& watch, double now, const LookSummary& summary) {
  nlohmann::json line;
  line["look"] = watch.looks;
  line["unix_time"] = now;
  line["processes"] = nlohmann::json::array();
  for (const auto& [key, state] : watch.followed) {
    const double taken = state.last.taken_at.value_or(now);
    line["processes"].push_back({{"process", process_label(state.last)},
                                 {"pid", state.last.labels.pid ? nlohmann::json(*state.last.labels.pid) : nullptr},
                                 {"host", state.last.labels.host.value_or("")},
                                 {"motion", triage::motion_name(state.motion)},
                                 {"why", state.why},
                                 {"still_seconds", taken - state.still_since},
                                 {"where", triage::python_places(state.last)}});
  }
  line["stuck"] = summary.stuck;
  std::ofstream out(watch.output / "looks.jsonl", std::ios::app);
  out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

// "; PID 4242: MainThread still; heartbeat moving (a helper...)": the process still the longest,
// where its helpers move (a look that says "0 moved" would not tell why).
std::string helper_note(const Watch& watch, const LookSummary& summary) {
  auto found = watch.followed.find(summary.longest_key);
  if (found == watch.followed.end() || found->second.motion != triage::Motion::kStill ||
      found->second.why.find("(a helper") == std::string::npos)
    return {};
  return fmt::format("; {}: {}", process_label(found->second.last), found->second.why);
}

void print_look(const Watch& watch, double now, const LookSummary& summary) {
  if (watch.options.quiet) return;
  const size_t total = watch.followed.size();
  fmt::print(stderr, "coreanalyze watch: {} look {}: {} Python process(es): {} moved, {} busy, {} "
             "still{}{}{}{}\n", clock_text(now), watch.looks, total, summary.moved, summary.busy,
             summary.still, summary.waiting ? fmt::format(", {} waiting for moving children", summary.waiting) : std::string(),
             summary.fresh ? fmt::format(", {} new", summary.fresh) : std::string(),
             summary.longest_still > 0 ? fmt::format("; longest without progress {:.0f} s of {:.0f}",
                                                     summary.longest_still, watch.options.after_seconds)
                                       : std::string(),
             helper_note(watch, summary));
}

bool hang_caught(const Watch& watch, const LookSummary& summary) {
  if (watch.followed.empty()) return false;
  return watch.options.any ? summary.stuck > 0 : summary.stuck == watch.followed.size();
}

// What was stuck, one line per process, for the terminal and DIR/watch.txt.
std::string stuck_lines(const Watch& watch, const LookSummary& summary, double now) {
  std::string text;
  for (const std::string& key : summary.stuck_keys) {
    const Followed& state = watch.followed.at(key);
    const double taken = state.last.taken_at.value_or(now);
    if (state.motion == triage::Motion::kBusy && state.busy_throughout) {
      text += fmt::format("  {}: spinning in {} for {:.0f} s (busy on every look since {}: {})\n",
                          process_label(state.last), for_terminal(triage::python_places(state.last)),
                          taken - state.still_since, clock_text(state.still_since), state.why);
      continue;
    }
    text += fmt::format("  {}: no progress for {:.0f} s (since {}), in {}\n", process_label(state.last),
                        taken - state.still_since, clock_text(state.still_since),
                        for_terminal(triage::python_places(state.last)));
  }
  return text;
}

int capture(Watch& watch, const LookSummary& summary, double now) {
  const WatchOptions& options = watch.options;
  fmt::print(stderr, "coreanalyze watch: {} hang caught: {} of {} Python process(es) made no progress "
             "for {:.0f} s or more; capturing into {}\n", clock_text(now), summary.stuck,
             watch.followed.size(), options.after_seconds, watch.output.string());
  const std::string lines = stuck_lines(watch, summary, now);
  fmt::print(stderr, "{}", lines);
  {
    std::ofstream out(watch.output / "watch.txt");
    out << fmt::format("hang caught at {} (after {} looks, every {} s): no progress for {} s\n{}",
                       clock_text(now), watch.looks, options.interval_seconds, options.after_seconds, lines);
  }
  std::fflush(stderr);
  std::vector<std::string> argv{watch.self};
  for (const std::string& word : collect_arguments(options.collect)) argv.push_back(word);
  // The capture's own output (its progress, the triage's verdict) goes to the terminal.
  ChildResult collected = run_child({argv, std::nullopt, false}, std::chrono::hours(1));
  if (!collected.started) fmt::print(stderr, "coreanalyze watch: capture not run: {}\n", collected.start_error);
  if (options.exec) {
    std::string pids;
    for (const std::string& key : summary.stuck_keys) {
      const auto& labels = watch.followed.at(key).last.labels;
      if (labels.pid) pids += (pids.empty() ? "" : " ") + std::to_string(*labels.pid);
    }
    setenv("HANGPY_CAPTURE_DIR", watch.output.c_str(), 1);
    setenv("HANGPY_VERDICT", (watch.output / "triage.txt").c_str(), 1);
    setenv("HANGPY_STUCK_PIDS", pids.c_str(), 1);
    fmt::print(stderr, "coreanalyze watch: running {}\n", for_terminal(*options.exec));
    std::fflush(stderr);
    ChildResult ran = run_child({{"/bin/sh", "-c", *options.exec}, std::nullopt, false}, std::chrono::minutes(10));
    if (!ran.started || ran.exit_code != 0)
      fmt::print(stderr, "coreanalyze watch: --exec {}\n",
                 ran.started ? fmt::format("exited with {}", ran.exit_code) : ran.start_error);
  }
  return kExitHangCaught;
}

}  // namespace

int run_watch(int argc, char** argv) {
  Watch watch;
  if (auto exit_code = parse_watch_options(argc, argv, watch.options)) return *exit_code;
  watch.self = this_program();
  std::error_code error;
  watch.output = fs::absolute(watch.options.collect.output_dir, error).lexically_normal();
  watch.options.collect.output_dir = watch.output.string();
  fs::create_directories(watch.output / ".looks", error);
  if (error) {
    fmt::print(stderr, "coreanalyze watch: {}: {}\n", watch.output.string(), error.message());
    return kExitBadInput;
  }
  // --pid of processes none of which exists: nothing will ever be looked at (--name and the rest
  // may match a job that has yet to start, and are waited for).
  const auto& roots = watch.options.collect.root_pids;
  if (!roots.empty() && !watch.options.collect.via &&
      std::none_of(roots.begin(), roots.end(), [](int pid) { return kill(pid, 0) == 0 || errno == EPERM; })) {
    fmt::print(stderr, "coreanalyze watch: no process has the PID{} given ({}): nothing to watch\n",
               roots.size() > 1 ? "s" : "", fmt::join(roots, ", "));
    return kExitBadInput;
  }
  const auto started = Clock::now();
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(watch.options.interval_seconds));
  auto next_look = started;
  if (!watch.options.quiet)
    fmt::print(stderr, "coreanalyze watch: a look every {} s; a hang is {} without progress for {} s; "
               "results into {}\n", watch.options.interval_seconds,
               watch.options.any ? "any process" : "the whole job", watch.options.after_seconds,
               watch.output.string());
  for (;;) {
    LookRecords look = take_look(watch);
    const double now = unix_now();
    ++watch.looks;
    const LookSummary summary = follow(watch, look, now);
    // When the job has ended, the last look's complaints (no process found) are not news.
    const bool ended = watch.seen_any && watch.followed.empty();
    for (const std::string& problem : look.problems)
      if (!watch.options.quiet && !ended) fmt::print(stderr, "coreanalyze watch: look {}: {}\n", watch.looks, for_terminal(problem));
    append_look_line(watch, now, summary);
    print_look(watch, now, summary);
    if (!watch.followed.empty()) watch.seen_any = true;
    if (hang_caught(watch, summary)) return capture(watch, summary, now);
    if (watch.seen_any && watch.followed.empty()) {
      fmt::print(stderr, "coreanalyze watch: the job's Python processes have ended; no hang caught\n");
      return kExitSuccess;
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    if (watch.options.for_seconds && elapsed >= *watch.options.for_seconds) {
      fmt::print(stderr, "coreanalyze watch: watched for {:.0f} s; no hang caught\n", elapsed);
      return kExitSuccess;
    }
    next_look += interval;
    const auto now_steady = Clock::now();
    if (next_look < now_steady) next_look = now_steady;  // a look longer than the interval
    std::this_thread::sleep_until(next_look);
  }
}

}  // namespace hangpy::jobs
