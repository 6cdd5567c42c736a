#include "triage/absent.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "triage/rank_set.h"
#include "triage/verdict.h"

namespace hangpy::triage {
namespace {

bool is_rank(const ProcessLabels& labels) {
  return rank_of(labels).has_value() && !labels.dataloader_worker_id.has_value();
}

// The world size the ranks agree on; 0 when none says, -1 when they disagree.
int64_t agreed_world_size(const Triage& triage, const std::vector<int>& ranks) {
  std::set<int64_t> sizes;
  for (int p : ranks)
    if (auto size = triage.processes[p].labels.world_size) sizes.insert(*size);
  if (sizes.size() > 1) return -1;
  return sizes.empty() ? 0 : *sizes.begin();
}

// The processes torch.multiprocessing.spawn's parent said it started, where every rank present is
// a child of one such parent; 0 when none is known.
int64_t spawned_processes(const Triage& triage, const std::vector<int>& ranks) {
  std::set<int64_t> parents;
  for (int p : ranks) {
    const ProcessLabels& labels = triage.processes[p].labels;
    if (!labels.ppid) return 0;
    parents.insert(*labels.ppid);
  }
  if (parents.size() != 1) return 0;
  for (const ProcessRecord& process : triage.processes)
    if (process.labels.pid == *parents.begin() && process.labels.spawn_nprocs) return *process.labels.spawn_nprocs;
  return 0;
}

std::string ranks_text(const std::vector<int64_t>& ranks) {
  const std::string set = compact_ranges(ranks);
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", set);
}

}  // namespace

std::optional<AbsentRanks> find_absent_ranks(const Triage& triage) {
  AbsentRanks absent;
  std::set<int64_t> present_ranks;
  for (size_t p = 0; p < triage.processes.size(); ++p) {
    if (!is_rank(triage.processes[p].labels)) continue;
    absent.present.push_back(static_cast<int>(p));
    present_ranks.insert(*rank_of(triage.processes[p].labels));
  }
  if (absent.present.empty()) return std::nullopt;
  int64_t world = agreed_world_size(triage, absent.present);
  if (world < 0) return std::nullopt;
  if (world == 0) world = spawned_processes(triage, absent.present);
  if (world <= 0 || world > kMaxWorldSize) return std::nullopt;
  if (*present_ranks.begin() < 0 || *present_ranks.rbegin() >= world) return std::nullopt;
  absent.world_size = world;
  for (int64_t rank = 0; rank < world; ++rank)
    if (!present_ranks.contains(rank)) absent.missing.push_back(rank);
  if (absent.missing.empty()) return std::nullopt;
  return absent;
}

std::string describe_absent_ranks(const Triage& triage, const AbsentRanks& absent) {
  const std::string who = fmt::format("{} of {}", ranks_text(absent.missing), absent.world_size);
  const std::string them = absent.missing.size() == 1 ? "it" : "them";
  const std::string nowhere =
      fmt::format("no process of {} is among the {} triaged",
                  absent.missing.size() == 1 ? ranks_text(absent.missing) : std::string("those ranks"),
                  triage.processes.size());
  // Where the ranks present wait: one place (the user's line and the call there), every one of
  // them blocked there, and that call a collective or the rendezvous, which cannot end without
  // every rank of the group.
  std::set<std::tuple<std::string, std::string, std::optional<int>>> places;
  std::optional<ClassPlace> shared;
  bool all_in_collective = true;
  std::set<int> classes;
  for (int p : absent.present) classes.insert(triage.class_of[p]);
  for (int c : classes) {
    ClassPlace where = class_place(triage, c);
    if (!where.place) return fmt::format("{} {} missing: {}", who, absent.missing.size() == 1 ? "is" : "are", nowhere);
    places.emplace(where.place->function, where.place->file, where.place->line);
    if (collective_of(where).empty()) all_in_collective = false;
    if (!shared) shared = where;
  }
  if (places.size() != 1 || !all_in_collective) {
    return fmt::format("{} {} missing: {}", who, absent.missing.size() == 1 ? "is" : "are", nowhere);
  }
  const std::string present = describe_processes(triage, absent.present);
  const Place& place = *shared->place;
  // In the rendezvous, the ranks present wait for the others to join: the absent never did.
  const bool joining = place.function == "init_process_group" ||
                       (shared->blocked_on && shared->blocked_on->starts_with("init_process_group's"));
  if (joining) {
    return fmt::format("{} never joined: {} wait for {} in {}; {}", who, present, them, format_place(place), nowhere);
  }
  return fmt::format("{} {} missing: {} wait for {} in {}, and {}", who, absent.missing.size() == 1 ? "is" : "are",
                     present, them, format_place(place), nowhere);
}

}  // namespace hangpy::triage
