// Ranks that should exist and are not among the processes triaged: a job's expected membership
// (WORLD_SIZE, the world_size given to init_process_group, the processes spawn started) against
// the ranks present. A wait that only an absent rank could end is where the hang is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "triage/merge.h"

namespace hangpy::triage {

// Beyond this a world size is no job's: nothing is said.
inline constexpr int64_t kMaxWorldSize = int64_t{1} << 20;

struct AbsentRanks {
  int64_t world_size = 0;
  std::vector<int64_t> missing;  // ranks in [0, world_size) that no process has, ascending
  std::vector<int> present;      // the processes that are ranks of the job, in input order
};

// Absent when nothing is missing or the membership is not known or not consistent: ranks that
// disagree on the world size, or a rank outside it (two jobs in one triage). Ranks are the
// processes with a rank label that are not DataLoader workers; the world size is theirs, else
// the nprocs of the spawn parent whose children they are.
std::optional<AbsentRanks> find_absent_ranks(const Triage& triage);

// The verdict's first line for them: "rank 3 of 4 never joined: ranks 0-2 wait for it in
// `init_process_group` at train.py:37; no process of rank 3 is among the 5 triaged", where the
// ranks present all wait at one place; "ranks 4-7 of 8 are missing: no process of theirs is
// among the 4 triaged" where they do not.
std::string describe_absent_ranks(const Triage& triage, const AbsentRanks& absent);

}  // namespace hangpy::triage
