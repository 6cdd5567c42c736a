// Sets of ranks (or input positions) written compactly, as STAT and SLURM write node lists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hangpy::triage {

// "0-2,4-7" for {0,1,2,4,5,6,7}; "3" for {3}; "" for none. Any order, duplicates allowed.
std::string compact_ranges(std::vector<int64_t> values);

}  // namespace hangpy::triage
