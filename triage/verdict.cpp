#include "triage/verdict.h"

#include "triage/absent.h"
#include "triage/differing_locals.h"
#include "triage/lost_tasks.h"
#include "triage/process_cycles.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include <fmt/format.h>

#include "triage/rank_set.h"

namespace hangpy::triage {
namespace {

// More classes than this in the verdict make a paragraph, not a few lines; the rest are listed
// below it.
constexpr size_t kMaxClassesInVerdict = 6;
// One group's line, at most: a verdict is read, not scrolled.
constexpr size_t kMaxLineLength = 200;
// A cycle's line names every wait in it: a cut one would not close.
constexpr size_t kMaxCycleLineLength = 400;

// A wait kind (docs/json-schema.md's blocked_on.kind) as a user says it.
std::string_view kind_in_words(std::string_view kind) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 28> kWords = {{
      {"gil", "the GIL"}, {"lock", "a lock"}, {"rlock", "an RLock"}, {"condition", "a Condition"},
      {"event", "an Event"}, {"semaphore", "a Semaphore"}, {"barrier", "a threading.Barrier"},
      {"queue", "a queue"}, {"process_queue", "a multiprocessing queue or pipe"},
      {"join", "another thread to end"}, {"child_process", "a child process"}, {"sleep", "a sleep"},
      {"select", "select/poll on files or sockets"}, {"socket", "a socket"},
      {"read", "a read from a pipe or file"}, {"write", "a write to a pipe or file"},
      {"pthread_mutex", "a C mutex (pthread)"},
      {"collective", "a torch.distributed collective"}, {"thread_pool", "a native thread pool"}, {"garbage_collection", "the garbage collector"},
      {"syscall", "a system call"}, {"task", "another task"}, {"future", "a Future"},
      {"gather", "asyncio.gather"}, {"taskgroup", "a TaskGroup"}, {"executor", "a thread of an executor"},
      {"other", "an awaitable"}, {"running", "nothing (running)"}}};
  for (const auto& [name, words] : kWords)
    if (kind == name) return words;
  return kind;
}

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
  return std::string(kind_in_words(*kinds.begin()));
}

// Whether every thread with Python frames of every member waits for work (and one does).
bool idle_class(const Triage& triage, const EquivalenceClass& cls) {
  for (int p : cls.processes) {
    bool some = false;
    for (const ThreadRecord& thread : triage.processes[p].threads) {
      if (thread.python_frames.empty() && !thread.asyncio_task) continue;
      if (!thread.idle) return false;
      some = true;
    }
    if (!some) return false;
  }
  return !cls.processes.empty();
}

// Cut to the verdict's line length, at a word where one is near.
std::string cut_line(std::string line, size_t limit = kMaxLineLength) {
  if (line.size() <= limit) return line;
  size_t cut = line.rfind(' ', limit - 4);
  if (cut == std::string::npos || cut < limit / 2) cut = limit - 4;
  line.resize(cut);
  return line + " ...";
}

}  // namespace

std::string process_name(const Triage& triage, int process) {
  const ProcessLabels& labels = triage.processes[process].labels;
  std::optional<int64_t> rank = rank_of(labels);
  std::string name = rank ? fmt::format("rank {}", *rank) : fmt::format("process {}", process);
  // A DataLoader worker inherits its rank's RANK: it is that rank's worker, not the rank.
  if (labels.dataloader_worker_id) {
    name = rank ? fmt::format("rank {}'s DataLoader worker {}", *rank, *labels.dataloader_worker_id)
                : fmt::format("DataLoader worker {}", *labels.dataloader_worker_id);
  }
  std::vector<std::string> details;
  if (labels.pid) details.push_back(fmt::format("PID {}", *labels.pid));
  if (labels.host) details.push_back(fmt::format("on {}", *labels.host));
  if (labels.container) details.push_back(fmt::format("in {}", *labels.container));
  if (!details.empty()) name += fmt::format(" ({})", fmt::join(details, " "));
  return name;
}

std::string describe_processes(const Triage& triage, const std::vector<int>& members) {
  if (members.size() == 1) return process_name(triage, members.front());
  std::vector<int64_t> ranks, positions;
  std::vector<int> workers;
  for (int p : members) {
    if (triage.processes[p].labels.dataloader_worker_id) workers.push_back(p);
    else if (auto rank = rank_of(triage.processes[p].labels)) ranks.push_back(*rank);
    else positions.push_back(p);
  }
  std::vector<std::string> parts;
  if (workers.size() > 3) {
    parts.push_back(fmt::format("{} DataLoader workers", workers.size()));
  } else {
    for (int p : workers) parts.push_back(process_name(triage, p));
  }
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

std::string collective_of(const ClassPlace& where) {
  static constexpr std::array<std::string_view, 17> kCollectives = {
      "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter",
      "reduce_scatter_tensor", "barrier", "monitored_barrier", "send", "recv", "isend", "irecv",
      "all_to_all", "all_to_all_single", "reduce", "gather", "scatter"};
  if (!where.place) return "";
  for (std::string_view name : kCollectives)
    if (where.place->function == name) return where.place->function;
  // The rendezvous: it ends when every rank of the group has joined, as a collective does.
  if (where.place->function == "init_process_group") return where.place->function;
  // A wait the diagnosis names as one (DDP's backward, a rendezvous) at a call of another name.
  if (where.blocked_on && (where.blocked_on->starts_with("torch.distributed") || where.blocked_on->starts_with("DDP's") ||
                           where.blocked_on->starts_with("init_process_group's")))
    return where.place->function;
  return "";
}

std::string describe_class(const Triage& triage, int class_index, bool with_fraction) {
  const EquivalenceClass& cls = triage.classes[class_index];
  std::string text = describe_processes(triage, cls.processes);
  if (with_fraction && cls.processes.size() > 1)
    text += fmt::format(" ({} of {})", cls.processes.size(), processes_of_role(triage, cls.role));
  // The role, unless the names say it already ("DataLoader worker 1").
  if (!is_plain_role(cls.role) && text.find(*cls.role) == std::string::npos) text += fmt::format(" [{}]", *cls.role);
  ClassPlace where = class_place(triage, class_index);
  text += where.place ? " in " + format_place(*where.place) : " with no Python stack";
  if (where.blocked_on && where.asyncio_task) {
    text += ", an asyncio task awaiting " + *where.blocked_on;
  } else if (where.blocked_on && where.blocked_on->starts_with("sleep")) {
    text += ", sleeping" + where.blocked_on->substr(5);  // "sleep (clock_nanosleep)"
  } else if (where.blocked_on) {
    text += ", waiting for " + *where.blocked_on;
  }
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

namespace {

bool same_place(const std::optional<Place>& a, const std::optional<Place>& b) {
  return a && b && a->function == b->function && a->file == b->file && a->line == b->line;
}

// Busy classes whose places are one line of the program and the call there: one group for the
// verdict. What sets them apart lies below that line, in a library (rank 0 hosts the TCPStore in
// the rendezvous the others wait in): a role, not a cause, and never what makes one odd.
struct PlaceGroup {
  std::vector<int> classes;    // largest first
  std::vector<int> processes;  // ascending
  std::optional<Place> place;
};

std::vector<PlaceGroup> place_groups(const Triage& triage, const std::vector<int>& busy) {
  std::vector<PlaceGroup> groups;
  for (int c : busy) {
    std::optional<Place> place = class_place(triage, c).place;
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const PlaceGroup& g) { return same_place(g.place, place); });
    if (group == groups.end()) group = groups.insert(groups.end(), PlaceGroup{{}, {}, place});
    group->classes.push_back(c);
    const std::vector<int>& members = triage.classes[c].processes;
    group->processes.insert(group->processes.end(), members.begin(), members.end());
  }
  for (PlaceGroup& group : groups) std::sort(group.processes.begin(), group.processes.end());
  std::stable_sort(groups.begin(), groups.end(), [](const PlaceGroup& a, const PlaceGroup& b) {
    return a.processes.size() > b.processes.size();
  });
  return groups;
}

// A group as one line: one class as describe_class says it; several at one place, their
// processes, the place, and what each class waits for below it where they differ.
std::string describe_group(const Triage& triage, const PlaceGroup& group, bool with_fraction) {
  if (group.classes.size() == 1) return describe_class(triage, group.classes.front(), with_fraction);
  const EquivalenceClass& first = triage.classes[group.classes.front()];
  std::string text = describe_processes(triage, group.processes);
  if (with_fraction) text += fmt::format(" ({} of {})", group.processes.size(), processes_of_role(triage, first.role));
  if (!is_plain_role(first.role) && text.find(*first.role) == std::string::npos) text += fmt::format(" [{}]", *first.role);
  text += " in " + format_place(*group.place);
  std::vector<std::pair<int, std::optional<std::string>>> waits;
  std::set<std::optional<std::string>> distinct;
  for (int c : group.classes) {
    ClassPlace where = class_place(triage, c);
    waits.emplace_back(c, where.blocked_on);
    distinct.insert(where.blocked_on);
  }
  if (distinct.size() == 1) {
    if (*distinct.begin()) text += ", waiting for " + **distinct.begin();
    return text;
  }
  std::vector<std::string> parts;
  for (const auto& [c, blocked] : waits) {
    parts.push_back(fmt::format("{} {}", describe_processes(triage, triage.classes[c].processes),
                                blocked ? "waiting for " + *blocked : std::string("with another stack below it")));
  }
  return text + fmt::format(" ({})", fmt::join(parts, "; "));
}

// "they wait in different collectives (...), which can never meet", whatever the groups' sizes.
std::optional<std::string> collectives_never_meet(const Triage& triage, const PlaceGroup& a, const PlaceGroup& b) {
  const ClassPlace a_where = class_place(triage, a.classes.front());
  const ClassPlace b_where = class_place(triage, b.classes.front());
  if (collective_of(a_where).empty() || collective_of(b_where).empty()) return std::nullopt;
  if (same_place(a_where.place, b_where.place)) return std::nullopt;
  return fmt::format("they wait in different collectives ({} and {}), which can never meet",
                     format_place(*a_where.place), format_place(*b_where.place));
}

// The lines of one role: its odd groups first, then the majority, then the idle ones.
// `ends_found`: the processes' waits lead to a process (find_process_chains), which the lines
// before these name; a tie then needs no "no single odd one out".
void role_lines(Triage& triage, const std::optional<std::string>& role, bool first_role, bool ends_found,
                Verdict& verdict, std::vector<std::string>& lines, size_t& left_out, bool& tie_seen) {
  std::vector<int> busy_classes, idle;  // largest first
  for (int c : classes_of_role(triage, role)) (idle_class(triage, triage.classes[c]) ? idle : busy_classes).push_back(c);
  const std::vector<PlaceGroup> busy = place_groups(triage, busy_classes);
  const size_t total = processes_of_role(triage, role);
  size_t idle_count = 0;
  for (int c : idle) idle_count += triage.classes[c].processes.size();
  auto add = [&](std::string line) {
    if (lines.size() >= kMaxClassesInVerdict) {
      ++left_out;
      return;
    }
    lines.push_back(cut_line(std::move(line)));
  };
  auto mark_outlier = [&](const PlaceGroup& group) {
    for (int c : group.classes) triage.classes[c].outlier = true;
  };
  Verdict::Kind kind = Verdict::Kind::kAllAlike;
  // One group at work among idle ones is the odd one out.
  if (busy.size() == 1 && !idle.empty()) kind = Verdict::Kind::kOutliers;
  if (busy.size() > 1) {
    kind = busy[0].processes.size() > busy[1].processes.size() ? Verdict::Kind::kOutliers
                                                                : Verdict::Kind::kNoMajority;
  }
  if (first_role) verdict.kind = kind;
  if (kind == Verdict::Kind::kOutliers && busy.size() == 1) {
    mark_outlier(busy[0]);
    add(fmt::format("{}: {}", busy[0].processes.size() == 1 ? "the odd one out" : "the odd ones out",
                    describe_group(triage, busy[0], false)));
  } else if (kind == Verdict::Kind::kOutliers) {
    for (size_t k = 1; k < busy.size(); ++k) mark_outlier(busy[k]);
    const size_t odd = total - idle_count - busy[0].processes.size();
    for (size_t k = 1; k < busy.size(); ++k)
      add(fmt::format("{}: {}", odd == 1 ? "the odd one out" : "the odd ones out", describe_group(triage, busy[k], false)));
    add(fmt::format("the other {}: {}", total - idle_count - odd, describe_group(triage, busy[0], false)));
    // Processes in two different collectives wait for each other forever.
    if (auto never = collectives_never_meet(triage, busy[1], busy[0])) add(*never);
    // What the program's own variables say sets the (first) odd group apart.
    if (std::optional<std::string> locals = differing_locals(triage, busy[1].classes.front(), busy[0].classes.front()))
      add(*locals);
  } else if (kind == Verdict::Kind::kNoMajority) {
    tie_seen = true;
    // Two groups of one size in different collectives: no vote tells them apart, and none is
    // needed: each waits for the other, which is the cause, said first.
    std::optional<std::string> never;
    if (busy.size() == 2) never = collectives_never_meet(triage, busy[0], busy[1]);
    if (never)
      add(fmt::format("{} and {} wait for each other {}", describe_processes(triage, busy[0].processes),
                      describe_processes(triage, busy[1].processes), never->substr(std::string_view("they wait ").size())));
    else if (!ends_found)
      add(fmt::format("no single odd one out: {} groups, none larger", busy.size()));
    for (const PlaceGroup& group : busy) add(describe_group(triage, group, true));
    // What the program's own variables say sets one group apart from the other.
    if (never) {
      if (std::optional<std::string> locals = differing_locals(triage, busy[1].classes.front(), busy[0].classes.front()))
        add(*locals);
    }
  } else if (!busy.empty()) {
    const size_t alike = busy[0].processes.size();
    const bool one_class = busy[0].classes.size() == 1;
    add(alike > 1 ? fmt::format("all {} {}{}: {}", alike, is_plain_role(role) ? "processes " : "",
                                one_class ? "alike" : "at one place", describe_group(triage, busy[0], false))
                  : describe_group(triage, busy[0], false));
  }
  for (int c : idle) add(fmt::format("idle (waiting for work): {}", describe_class(triage, c, false)));
}

}  // namespace

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
  // A role that only waits for its children (a pre-fork server's parent, a launcher) says least:
  // it goes last whatever its size.
  auto waits_for_children = [&](const std::optional<std::string>& role) {
    for (int c : classes_of_role(triage, role)) {
      const std::optional<std::string> blocked = class_place(triage, c).blocked_on;
      if (!blocked || !(blocked->starts_with("child process") || *blocked == "a child process")) return false;
    }
    return true;
  };
  std::stable_sort(roles.begin(), roles.end(), [&](const auto& a, const auto& b) {
    const bool a_waits = waits_for_children(a), b_waits = waits_for_children(b);
    if (a_waits != b_waits) return b_waits;
    return processes_of_role(triage, a) > processes_of_role(triage, b);
  });
  std::vector<std::string> lines;
  size_t left_out = 0;
  // Ranks that should be there and are not come first: what the others wait for ends there.
  if (std::optional<AbsentRanks> absent = find_absent_ranks(triage)) {
    lines.push_back(cut_line(describe_absent_ranks(triage, *absent)));
    verdict.absent_ranks = absent->missing;
    verdict.world_size = absent->world_size;
  }
  // Processes that wait for each other: no one of them can move first.
  for (const ProcessCycle& cycle : find_process_cycles(triage))
    lines.push_back(cut_line(describe_process_cycle(triage, cycle), kMaxCycleLineLength));
  // Results no worker will make: the waits end at a task that is nowhere.
  for (const LostPoolTask& lost : find_lost_pool_tasks(triage))
    lines.push_back(cut_line(describe_lost_pool_task(triage, lost)));
  // Where the processes' waits lead, when no vote can say: the process at the end is the culprit,
  // whatever the size of its group. Where a vote does name odd ones, they come first as before.
  const std::vector<ProcessChain> chains = find_process_chains(triage);
  std::vector<std::string> role_text;
  bool tie_seen = false;
  for (size_t r = 0; r < roles.size(); ++r)
    role_lines(triage, roles[r], r == 0, !chains.empty(), verdict, role_text, left_out, tie_seen);
  if (tie_seen) {
    for (const ProcessChain& chain : chains) {
      lines.push_back(cut_line(describe_process_chain(triage, chain), kMaxCycleLineLength));
      triage.classes[triage.class_of[chain.end]].outlier = true;
    }
  }
  lines.insert(lines.end(), role_text.begin(), role_text.end());
  if (left_out > 0) lines.push_back(fmt::format("and {} more group{}", left_out, left_out == 1 ? "" : "s"));
  verdict.lines = lines;
  verdict.text = fmt::format("{}", fmt::join(lines, "\n"));
  return verdict;
}

}  // namespace hangpy::triage
